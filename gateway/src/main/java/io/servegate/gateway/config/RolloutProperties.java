package io.servegate.gateway.config;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/** Safe rollouts ({@code servegate.rollouts.*}, docs/rollouts.md), stored beside the registry. */
public record RolloutProperties(
        /**
         * How often each gateway reads the rollouts (routing follows them), stores its evidence,
         * and the deciding gateway decides: the bound on a step reaching every gateway.
         */
        @DefaultValue("1s") Duration interval,
        /** How long an answer of a rollout's model is remembered for the feedback about it. */
        @DefaultValue("10m") Duration playedTtl,
        /** About how much heap the remembered answers may take; 0 joins no feedback. */
        @DefaultValue("32MB") DataSize playedSize,
        /**
         * Shadow copies in flight at most from this gateway; beyond it, and whenever the
         * candidate's scheduler has a batch waiting, copies are dropped. 0 sends none.
         */
        @DefaultValue("64") int shadowMaxInFlight) {
}
