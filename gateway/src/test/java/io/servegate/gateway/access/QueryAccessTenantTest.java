package io.servegate.gateway.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.RateLimit;
import io.servegate.gateway.registry.SelectionConfig;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tenant an OIP query is scheduled as: the app whose key let it through, so a keyed
 * critical app's clients keep its tier over the Open Inference Protocol too; without a key (an
 * app without keys reaching the model), the default tenant.
 */
class QueryAccessTenantTest {

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final QueryKeys keys = new QueryKeys(new InMemoryQueryKeyStore(), Duration.ofMillis(1), 100);
    private final QueryAccess access = new QueryAccess(keys, new QueryQuotas(System::nanoTime, 100),
            new SimpleMeterRegistry());

    @AfterEach
    void close() {
        registry.close();
    }

    private void app(String name, String model, Priority priority, int weight, RateLimit limit) {
        registry.addApp(new Application(name, "floats", "-1", 50_000, List.of(model), SelectionConfig.SINGLE,
                Application.OverloadResponse.DEFAULT, limit, priority, weight)).block();
    }

    @Test
    void anOipQueryWithAKeyIsScheduledAsTheKeysApp() {
        registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "", "", -1)).block();
        app("fraud", "m", Priority.CRITICAL, 5, null);
        app("batch", "m", Priority.SHEDDABLE, 1, null);
        String fraudKey = keys.create("fraud", null).block().key();
        String batchKey = keys.create("batch", null).block().key();

        assertThat(access.model(registry.snapshot(), "m", "Bearer " + fraudKey).block().tenant())
                .isEqualTo(new Tenant("fraud", Priority.CRITICAL, 5));
        assertThat(access.model(registry.snapshot(), "m", "Bearer " + batchKey).block().tenant())
                .isEqualTo(new Tenant("batch", Priority.SHEDDABLE, 1));
        // with a quota, a query within it keeps its tenant as well
        app("quoted", "m", Priority.CRITICAL, 2, new RateLimit(100, 10));
        String quotedKey = keys.create("quoted", null).block().key();
        QueryAccess.Verdict quoted = access.model(registry.snapshot(), "m", "Bearer " + quotedKey).block();
        assertThat(quoted.outcome()).isEqualTo(QueryAccess.Outcome.PASS);
        assertThat(quoted.tenant()).isEqualTo(new Tenant("quoted", Priority.CRITICAL, 2));
    }

    @Test
    void withoutAKeyAnOipQueryIsTheDefaultTenantAndARefusedOneHasNone() {
        registry.addModel(new ModelVersion("open", "1", List.of(), "floats", "", "", -1)).block();
        registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "", "", -1)).block();
        app("public", "open", Priority.CRITICAL, 3, null);
        app("fraud", "m", Priority.CRITICAL, 5, null);
        keys.create("fraud", null).block();

        // an app without keys names no caller: its model's OIP queries cannot be told apart
        assertThat(access.model(registry.snapshot(), "open", null).block().tenant()).isEqualTo(Tenant.DEFAULT);
        QueryAccess.Verdict wrong = access.model(registry.snapshot(), "m", "Bearer nope").block();
        assertThat(wrong.outcome()).isEqualTo(QueryAccess.Outcome.UNAUTHORIZED);
        assertThat(wrong.tenant()).isEqualTo(Tenant.DEFAULT);
    }
}
