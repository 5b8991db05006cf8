package io.servegate.gateway.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminHandler;
import io.servegate.gateway.api.AdminRequests;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.api.AutoscalingHandler;
import io.servegate.gateway.autoscaling.AutoscalingService;
import io.servegate.gateway.api.BearerAuth;
import io.servegate.gateway.api.BodyBytesInFlight;
import io.servegate.gateway.api.DeploymentHandler;
import io.servegate.gateway.api.EventLoopDeadlines;
import io.servegate.gateway.api.HttpRequestTracing;
import io.servegate.gateway.api.Errors;
import io.servegate.gateway.api.InputParser;
import io.servegate.gateway.api.JsonBodies;
import io.servegate.gateway.api.MetricsHandler;
import io.servegate.gateway.api.OipRestHandler;
import io.servegate.gateway.api.PipelineAdminHandler;
import io.servegate.gateway.api.PipelinePlanHandler;
import io.servegate.gateway.api.ProfileHandler;
import io.servegate.gateway.api.QueryHandler;
import io.servegate.gateway.api.ScheduledByHeader;
import io.servegate.gateway.api.UnroutedRequests;
import io.servegate.gateway.api.QueryAccessFilter;
import io.servegate.gateway.api.QueryKeyHandler;
import io.servegate.gateway.access.QueryAccess;
import io.servegate.gateway.access.QueryKeys;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.connections.HttpConnectionGuard;
import io.servegate.gateway.containers.Backoff;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerProviders;
import io.servegate.gateway.containers.ExternalContainerManager;
import io.servegate.gateway.containers.ModelDirectories;
import io.servegate.gateway.containers.PathArguments;
import io.servegate.gateway.containers.ProcessCommandPolicy;
import io.servegate.gateway.containers.ProcessContainerManager;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.RestartPolicy;
import io.servegate.gateway.demo.DemoRunner;
import io.servegate.gateway.metrics.ClipperMetrics;
import io.servegate.gateway.query.PipelineService;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.query.SelectionService;
import io.servegate.gateway.query.TimerLag;
import io.servegate.gateway.selection.InMemorySelectionStateStore;
import io.servegate.gateway.selection.RedisSelectionStateStore;
import io.servegate.gateway.selection.SelectionStateStore;
import io.servegate.gateway.selection.StateBounds;
import io.servegate.gateway.fleet.FleetDispatcher;
import io.servegate.gateway.fleet.Ownership;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.RedisRegistry;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.rollout.RolloutTraffic;
import io.servegate.gateway.api.RolloutHandler;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.dispatch.ProfileSharing;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.dispatch.ReplicaProfiler;
import io.servegate.core.trace.RunRecorder;
import io.servegate.gateway.warmup.ReadinessGate;
import io.servegate.oip.client.TensorType;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;
import org.springframework.context.annotation.Configuration;
import io.servegate.gateway.api.JsonErrorWebExceptionHandler;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import org.springframework.web.server.WebFilter;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.ObjectMapper;

/** Wires the plain-Java cores (registry, cache, replica pool) into the two HTTP servers. */
@Configuration(proxyBeanMethods = false)
public class GatewayConfiguration {

    /** The one clock of the request path; tests of the cores inject virtual ones instead. */
    @Bean
    LongSupplier gatewayClock() {
        return System::nanoTime;
    }

    @Bean(destroyMethod = "close")
    Registry registry(ServegateProperties props) {
        ServegateProperties.Registry r = props.registry();
        return switch (r.store()) {
            case "memory" -> new InMemoryRegistry();
            case "redis" -> RedisRegistry.connect(RedisClients.create(r.redisUri(), props.redis()), r.keyPrefix(),
                    Duration.ofMillis(500));
            default -> throw new IllegalArgumentException("servegate.registry.store must be 'memory' or 'redis', got '"
                    + r.store() + "'");
        };
    }

    @Bean
    PredictionCache predictionCache(ServegateProperties props, MeterRegistry meters) {
        return new PredictionCache(props.cache().enabled(), props.cache().maxSize().toBytes(), meters);
    }

    /**
     * The run's recording for {@code bin/sim replay}, when {@code servegate.scheduling.record-file}
     * is set; what arrives after it is closed is dropped.
     */
    @Bean(destroyMethod = "close")
    @Conditional(RecordFileSet.class)
    RunRecorder runRecorder(ServegateProperties props) throws IOException {
        return RunRecorder.open(Path.of(props.scheduling().recordFile()));
    }

    /** Binds the property as {@link ServegateProperties} does, so that every spelling of it counts. */
    static final class RecordFileSet implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return Binder.get(context.getEnvironment()).bind("servegate.scheduling.record-file", String.class)
                    .map(StringUtils::hasText).orElse(false);
        }
    }

    @Bean(destroyMethod = "close")
    ReplicaPool replicaPool(ServegateProperties props, MeterRegistry meters, LongSupplier clock, Registry registry,
            ObjectProvider<RunRecorder> recorder, ObjectProvider<ProfileSharing> sharing) {
        ReplicaPool pool = new ReplicaPool(props.batching(), props.scheduling(), props.rpc(), meters, clock,
                Schedulers.parallel(), recorder.getIfAvailable(), sharing.getIfAvailable(() -> ProfileSharing.ALONE));
        registry.addListener(pool::sync);
        pool.sync(registry.snapshot());
        return pool;
    }

    /** One daemon thread that only times query deadlines (see {@link PredictionService}). */
    @Bean(destroyMethod = "dispose")
    Scheduler deadlineTimer() {
        return Schedulers.newSingle("servegate-deadlines", true);
    }

    /** How late the gateway's timers run: probed on the deadline thread every 5 ms. */
    @Bean
    TimerLag timerLag(LongSupplier clock, MeterRegistry meters, ServegateProperties props) {
        return new TimerLag(clock, props.timerLagShedFraction(), meters);
    }

    @Bean(destroyMethod = "dispose")
    Disposable timerLagProbe(TimerLag lag, Scheduler deadlineTimer) {
        return lag.probe(deadlineTimer, Duration.ofMillis(5));
    }

    /** Queries go to this gateway's replicas, or in a fleet ({@link FleetConfiguration}) to their version's owner. */
    @Bean
    PredictionService predictionService(PredictionCache cache, ReplicaPool pool,
            ObjectProvider<FleetDispatcher> fleet, LongSupplier clock,
            MeterRegistry meters, ServegateProperties props, Scheduler deadlineTimer, TimerLag lag,
            QueryTracing tracing) {
        Dispatcher forwarding = fleet.getIfAvailable();
        return new PredictionService(cache, forwarding != null ? forwarding : pool, clock, meters,
                props.deadlineMargin(), deadlineTimer, Schedulers.parallel()).shedding(lag).tracing(tracing);
    }

    @Bean(destroyMethod = "close")
    SelectionStateStore selectionStateStore(ServegateProperties props) {
        ServegateProperties.Selection sel = props.selection();
        StateBounds bounds = new StateBounds(sel.maxStatesPerApp(), sel.ttl().isZero() ? null : sel.ttl());
        return switch (sel.store()) {
            case "memory" -> new InMemorySelectionStateStore(bounds);
            case "redis" -> RedisSelectionStateStore.connect(RedisClients.create(
                    sel.redisUri().isBlank() ? props.registry().redisUri() : sel.redisUri(), props.redis()),
                    sel.keyPrefix(), bounds);
            default -> throw new IllegalArgumentException("servegate.selection.store must be 'memory' or 'redis', got '"
                    + sel.store() + "'");
        };
    }

    @Bean
    SelectionService selectionService(PredictionService predictions, SelectionStateStore store,
            ServegateProperties props, LongSupplier clock, MeterRegistry meters) {
        return new SelectionService(predictions, store, props.selection().stateReadTimeout(),
                props.selection().maxStates(), props.selection().playedTtl(),
                props.selection().playedSize().toBytes(), props.selection().maxContextBytes(), clock, meters);
    }

    /**
     * Closed before the registry (it depends on it), so the replicas it stops are unregistered first.
     * {@code process} and {@code external} are built in; other managers come from their modules
     * ({@link ContainerManagerProviders}).
     */
    @Bean(destroyMethod = "close")
    ContainerManager containerManager(ServegateProperties props, Registry registry, Environment environment) {
        ServegateProperties.Containers c = props.containers();
        ReadinessProbe probe = new ReadinessProbe(c.probeTimeout(), c.probeInterval(), Schedulers.parallel());
        return switch (c.manager()) {
            case "process" -> new ProcessContainerManager(registry, probe, new ProcessContainerManager.Settings(
                    c.readinessTimeout(), c.probeInterval(), c.livenessFailures(),
                    RestartPolicy.parse(c.restartPolicy()), new Backoff(c.restartBackoff(), c.restartBackoffMax()),
                    c.stopGracePeriod(), modelDirectories(c)), Schedulers.boundedElastic());
            case "external" -> new ExternalContainerManager(registry, probe, c.readinessTimeout(), c.probeInterval(),
                    c.livenessFailures(), Schedulers.parallel());
            default -> ContainerManagerProviders.load(c.manager(), getClass().getClassLoader())
                    .create(registry, probe, Binder.get(environment));
        };
    }

    private static ModelDirectories modelDirectories(ServegateProperties.Containers c) {
        return new ModelDirectories(c.modelDirectories(), c.modelPathEnv());
    }

    @Bean
    JsonBodies jsonBodies(ObjectMapper mapper) {
        return new JsonBodies(mapper);
    }

    @Bean
    InputParser inputParser(ServegateProperties props) {
        return new InputParser(props.limits().maxInputLength());
    }

    @Bean(destroyMethod = "close")
    ClipperMetrics clipperMetrics(MeterRegistry meters, LongSupplier clock) {
        return new ClipperMetrics(meters, clock, Schedulers.parallel());
    }

    @Bean
    PipelineService pipelineService(PredictionService predictions, ReplicaPool pool, JsonBodies bodies,
            InputParser inputs) {
        // a model's output is JSON for numbers (and base64 bytes); a string output is its own text
        return new PipelineService(predictions, pool, (type, output) -> {
            JsonNode node = type == TensorType.STRINGS ? JsonNodeFactory.instance.stringNode(output)
                    : bodies.tryParse(output);
            if (node == null) {
                throw new IllegalArgumentException("not JSON");
            }
            return inputs.parse(type, node, "stage output");
        });
    }

    @Bean
    RouterFunction<ServerResponse> queryRoutes(QueryAccess access, Registry registry, PredictionService predictions,
            SelectionService selection, PipelineService pipelines, JsonBodies bodies, InputParser inputs, ServegateProperties props, LongSupplier clock,
            ClipperMetrics clipperMetrics, ObjectProvider<Ownership> ownership,
            ObjectProvider<io.prometheus.metrics.model.registry.PrometheusRegistry> prometheus, MeterRegistry meters,
            ReadinessGate readiness, RolloutTraffic rollouts) {
        QueryHandler query = new QueryHandler(registry, predictions, selection, pipelines, rollouts,
                props.selection().feedbackTimeout(), bodies, inputs, props.limits().maxBatchInputs(), clock);
        OipRestHandler oip = new OipRestHandler(registry, predictions, bodies, inputs, props.oip().timeout(),
                props.limits().maxBatchInputs(), readiness, rollouts);
        // the query routes first: every request is tested against the routes in order, and these
        // take nearly all of them (their patterns share no path with the others, so order decides nothing)
        RouterFunction<ServerResponse> routes = RouterFunctions.route()
                .POST("/{app}/predict", query::predict)
                .POST("/{app}/update", query::update)
                .GET("/v2", oip::serverMetadata)
                .GET("/v2/health/live", oip::live)
                .GET("/v2/health/ready", oip::ready)
                .GET("/v2/models/{model}", oip::metadata)
                .GET("/v2/models/{model}/ready", oip::modelReady)
                .POST("/v2/models/{model}/infer", oip::infer)
                .POST("/v2/models/{model}/versions/{version}/infer", oip::infer)
                .GET("/metrics", new MetricsHandler(clipperMetrics, prometheus::getObject)::metrics)
                .build()
                .filter(new QueryAccessFilter(registry, access));
        // innermost: it sees the handlers' errors before they become error responses
        RouterFunction<ServerResponse> served = (predictions.tracing().on()
                ? routes.filter(new HttpRequestTracing(predictions.tracing())) : routes)
                .filter(new ScheduledByHeader(registry, ownership.getIfAvailable(() -> Ownership.SOLO),
                        List.of(BearerAuth.of(adminToken(props), "servegate-admin"),
                                BearerAuth.of(metricsToken(props), "servegate-metrics"))));
        return UnroutedRequests.after(served, "endpoint", Errors.Shape::forPath)
                .filter(new EventLoopDeadlines())
                .filter(Errors.filter(Errors.Shape::forPath))
                .filter(BodyBytesInFlight.of(props, "query", meters)); // outermost: a refused request reads nothing
    }

    @Bean
    AutoscalingService autoscaling(ReplicaPool pool, ContainerManager containers, MeterRegistry meters,
            ServegateProperties props, LongSupplier clock, ObjectProvider<Ownership> ownership) {
        return new AutoscalingService(pool, containers, meters, props.autoscaling(), clock,
                ownership.getIfAvailable(() -> Ownership.SOLO)::owns);
    }

    @Bean
    AdminServer adminServer(Registry registry, ReplicaPool pool, PredictionCache cache, SelectionService selection,
            PipelineService pipelines, JsonBodies bodies, ServegateProperties props, ContainerManager containers,
            AutoscalingService autoscaling, MeterRegistry meters, ObjectProvider<Ownership> ownership,
            ConnectionBudget connectionBudget, QueryKeys keys, RolloutHandler rollouts) {
        String token = adminToken(props);
        QueryKeyHandler queryKeys = new QueryKeyHandler(registry, keys, bodies);
        BearerAuth.requireLoopbackOrToken(props.admin().address(), token);
        ServegateProperties.ProcessManager process = props.containers().process();
        // the allowlist applies where deploy_model's command is run: the process manager
        ProcessCommandPolicy commands = !containers.kind().equals("process") ? null : new ProcessCommandPolicy(
                process.allowedCommands(), process.allowedEnv(), !token.isEmpty(), process.requireAdminToken(),
                modelDirectories(props.containers()),
                new PathArguments(process.pathArguments(), process.outputDirectories()));
        AdminRequests requests = new AdminRequests(props.containers().maxReplicas(), pool::gatewayMaxBatchSize,
                selection::policy, commands);
        AdminHandler admin = new AdminHandler(registry, pool, cache, bodies, requests, containers, keys);
        DeploymentHandler deployments = new DeploymentHandler(registry, pool, bodies, requests, containers);
        AutoscalingHandler scaling = new AutoscalingHandler(registry, pool, autoscaling, pipelines, bodies,
                props.containers().maxReplicas());
        PipelineAdminHandler pipelineAdmin = new PipelineAdminHandler(registry, pipelines, bodies, keys);
        ProfileHandler profiles = new ProfileHandler(registry, pool, new ReplicaProfiler(registry, pool,
                (int) props.rpc().maxMessageSize().toBytes(), java.time.Clock.systemUTC()), bodies);
        PipelinePlanHandler plans = new PipelinePlanHandler(registry, containers, autoscaling, pool, bodies,
                props.containers().maxReplicas());
        RouterFunction<ServerResponse> served = RouterFunctions.route()
                .GET("/admin/ping", admin::ping)
                .POST("/admin/add_app", admin::addApp)
                .POST("/admin/create_query_key", queryKeys::create)
                .POST("/admin/get_query_keys", queryKeys::list)
                .POST("/admin/revoke_query_key", queryKeys::revoke)
                .POST("/admin/delete_app", admin::deleteApp)
                .POST("/admin/add_model", admin::addModel)
                .POST("/admin/set_model_version", admin::setModelVersion)
                .POST("/admin/delete_versioned_model", admin::deleteVersionedModel)
                .POST("/admin/add_model_links", admin::addModelLinks)
                .POST("/admin/delete_model_links", admin::deleteModelLinks)
                .POST("/admin/add_container", admin::addContainer)
                .POST("/admin/delete_container", admin::deleteContainer)
                .POST("/admin/get_all_applications", admin::getAllApplications)
                .POST("/admin/get_application", admin::getApplication)
                .POST("/admin/get_linked_models", admin::getLinkedModels)
                .POST("/admin/get_all_models", admin::getAllModels)
                .POST("/admin/get_model", admin::getModel)
                .POST("/admin/get_all_containers", admin::getAllContainers)
                .POST("/admin/deploy_model", deployments::deployModel)
                .POST("/admin/set_num_replicas", deployments::setNumReplicas)
                .GET("/admin/get_deployments", deployments::getDeployments)
                .GET("/admin/get_placements", deployments::getPlacements)
                .POST("/admin/set_autoscaling", scaling::set)
                .POST("/admin/get_autoscaling", scaling::get)
                .POST("/admin/set_pipeline_tuning", scaling::setPipelineTuning)
                .POST("/admin/add_pipeline", pipelineAdmin::addPipeline)
                .POST("/admin/delete_pipeline", pipelineAdmin::deletePipeline)
                .POST("/admin/get_pipeline", pipelineAdmin::getPipeline)
                .POST("/admin/get_all_pipelines", pipelineAdmin::getAllPipelines)
                .POST("/admin/profile_model", profiles::profileModel)
                .POST("/admin/get_profiles", profiles::getProfiles)
                .POST("/admin/apply_pipeline_plan", plans::applyPipelinePlan)
                .POST("/admin/start_rollout", rollouts::start)
                .POST("/admin/get_rollout", rollouts::get)
                .POST("/admin/pause_rollout", rollouts::pause)
                .POST("/admin/resume_rollout", rollouts::resume)
                .POST("/admin/abort_rollout", rollouts::abort)
                .GET("/admin/get_fleet", new io.servegate.gateway.api.FleetHandler(
                        ownership.getIfAvailable(() -> Ownership.SOLO), registry)::getFleet)
                .build();
        RouterFunction<ServerResponse> routes = UnroutedRequests.after(served, "admin endpoint",
                path -> Errors.Shape.CLIPPER)
                .filter(Errors.filter())
                .filter(BearerAuth.of(token, "servegate-admin").filter())
                .filter(BodyBytesInFlight.of(props, "admin", meters));
        HandlerStrategies strategies = HandlerStrategies.builder()
                .codecs(c -> c.defaultCodecs().maxInMemorySize((int) props.limits().maxBodySize().toBytes()))
                .exceptionHandler(new JsonErrorWebExceptionHandler(ServerCodecConfigurer.create().getWriters(),
                        path -> Errors.Shape.CLIPPER))
                .build();
        return new AdminServer(routes, strategies, props.admin().address(), props.admin().port(),
                HttpConnectionGuard.of(props.connections(), connectionBudget, "admin", meters));
    }

    /** Bodies over the limit fail with DataBufferLimitException, which {@link Errors} turns into 413. */
    @Bean
    WebFluxConfigurer bodyLimit(ServegateProperties props) {
        return new WebFluxConfigurer() {
            @Override
            public void configureHttpMessageCodecs(ServerCodecConfigurer configurer) {
                configurer.defaultCodecs().maxInMemorySize((int) props.limits().maxBodySize().toBytes());
            }
        };
    }

    /**
     * /metrics and the actuator endpoints other than the health probes need the metrics token,
     * or the admin token when no metrics token is set.
     */
    @Bean
    WebFilter metricsAuth(ServegateProperties props) {
        String token = metricsToken(props);
        if (token.isEmpty()) {
            token = adminToken(props);
        }
        return BearerAuth.of(token, "servegate-metrics").webFilter(path -> path.equals("/metrics")
                || (path.startsWith("/actuator") && !path.equals("/actuator/health")
                        && !path.startsWith("/actuator/health/")));
    }

    private static String adminToken(ServegateProperties props) {
        return BearerAuth.resolve(props.admin().token(), props.admin().tokenFile(), "servegate.admin.token");
    }

    private static String metricsToken(ServegateProperties props) {
        return BearerAuth.resolve(props.metrics().token(), props.metrics().tokenFile(), "servegate.metrics.token");
    }

    @Bean
    @Order(-2)
    JsonErrorWebExceptionHandler jsonErrors(ServerCodecConfigurer codecs) {
        return new JsonErrorWebExceptionHandler(codecs.getWriters(), Errors.Shape::forPath);
    }

    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "servegate.demo.enabled",
            havingValue = "true")
    DemoRunner demoRunner(ServegateProperties props, Registry registry, ContainerManager containers) {
        return new DemoRunner(props.demo(), registry, containers, props.containers().readinessTimeout());
    }
}
