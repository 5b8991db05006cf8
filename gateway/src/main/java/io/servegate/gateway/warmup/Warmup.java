package io.servegate.gateway.warmup;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.config.WarmupProperties;
import io.servegate.gateway.fleet.FleetNode;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warms the gateway up once its ports are open, on a thread of its own, and then opens its
 * {@link ReadinessGate}: the readiness endpoints answer ready and the gateway joins its fleet.
 * Whatever happens in the exercise, the gate opens by {@code servegate.warmup.max-duration}.
 */
public final class Warmup {

    private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);

    private final ReadinessGate gate;
    private final ServegateProperties props;
    private final WarmupProperties settings;
    private final LongSupplier clock;
    private volatile double seconds = Double.NaN;
    private volatile int rounds;
    private volatile long forwards;
    private final FleetNode fleet;

    /**
     * @param props the gateway's settings: the warm-up's own, and those its private replica pool is built with
     * @param fleet this gateway's place in its fleet, whose hop the warm-up exercises too; null = none
     */
    public Warmup(ReadinessGate gate, ServegateProperties props, LongSupplier clock, MeterRegistry meters,
            FleetNode fleet) {
        WarmupProperties settings = props.warmup();
        if (settings.callsPerRound() < 1) {
            throw new IllegalArgumentException("servegate.warmup.calls-per-round must be at least 1");
        }
        this.gate = gate;
        this.props = props;
        this.settings = settings;
        this.clock = clock;
        this.fleet = fleet;
        TimeGauge.builder("servegate.warmup.duration", this, TimeUnit.SECONDS, w -> w.seconds)
                .description("How long the warm-up before readiness took (NaN until it is over)").register(meters);
        Gauge.builder("servegate.warmup.rounds", this, w -> w.rounds)
                .description("Rounds of calls the warm-up made").register(meters);
        Gauge.builder("servegate.warmup.forwards", this, w -> w.forwards)
                .description("Warm-up queries forwarded to this gateway's own fleet port and answered there "
                        + "(0 outside a fleet)").register(meters);
        Gauge.builder("servegate.ready", gate, g -> g.ready() ? 1 : 0)
                .description("1 while the gateway reports ready (warm, not shutting down)").register(meters);
    }

    /**
     * Starts warming up the gateway whose query port is {@code httpHost:httpPort} and OIP gRPC
     * port {@code grpcHost:grpcPort} (0 = none).
     */
    public void start(String httpHost, int httpPort, String grpcHost, int grpcPort) {
        Thread t = new Thread(() -> run(httpHost, httpPort, grpcHost, grpcPort), "servegate-warmup");
        t.setDaemon(true);
        t.start();
    }

    private void run(String httpHost, int httpPort, String grpcHost, int grpcPort) {
        LOG.info("warming up the query path (at most {}) before reporting ready", settings.maxDuration());
        long start = clock.getAsLong();
        try {
            SelfExercise.Result r = new SelfExercise(httpHost, httpPort, grpcHost, grpcPort,
                    settings.callsPerRound(),
                    settings.maxDuration(), new SteadyLatency(settings.minRounds(), 3, settings.tolerance()),
                    address -> new SchedulerExercise(props, clock, address, fleet), clock)
                    .run();
            rounds = r.rounds();
            forwards = r.forwards();
            if (r.steady()) {
                LOG.info("warm-up done in {} ms, {} rounds, latency steady: ready", r.nanos() / 1_000_000, r.rounds());
            } else {
                LOG.warn("warm-up stopped at servegate.warmup.max-duration ({} ms, {} rounds) before its latency "
                        + "was steady: ready all the same", r.nanos() / 1_000_000, r.rounds());
            }
        } catch (RuntimeException e) {
            LOG.warn("warm-up failed after {} ms: ready all the same: {}", (clock.getAsLong() - start) / 1_000_000,
                    e.toString());
        } finally {
            seconds = (clock.getAsLong() - start) / 1e9;
            gate.warmedUp();
        }
    }
}
