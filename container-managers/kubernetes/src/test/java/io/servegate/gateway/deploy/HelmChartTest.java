package io.servegate.gateway.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Lints {@code helm/servegate} and renders it with the Helm bundled by helm-java (offline), then
 * checks the manifests as typed Kubernetes objects. No cluster is involved.
 */
class HelmChartTest {

    private static final Path CHART = Path.of("..", "..", "helm", "servegate");
    private static final Path VALUES = Path.of("src", "test", "resources", "helm");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private record Manifests(List<HasMetadata> items) {
        <T extends HasMetadata> T get(Class<T> kind, String name) {
            return items.stream().filter(kind::isInstance).map(kind::cast)
                    .filter(i -> i.getMetadata().getName().equals(name)).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + kind.getSimpleName() + " " + name + " in " + names()));
        }

        List<String> names() {
            return items.stream().map(i -> i.getKind() + "/" + i.getMetadata().getName()).sorted().toList();
        }
    }

    private static Manifests render(UnaryOperator<TemplateCommand> options) {
        String yaml = options.apply(new Helm(CHART).template().withName("rel").withNamespace("serving")).call();
        Object parsed = SERIALIZATION.unmarshal(yaml);
        @SuppressWarnings("unchecked")
        List<HasMetadata> items = parsed instanceof List<?> l ? (List<HasMetadata>) l : List.of((HasMetadata) parsed);
        return new Manifests(items);
    }

    private static Map<String, String> env(Container c) {
        return c.getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> servegateConfig(Manifests m) {
        Map<String, Object> app = new Yaml().load(m.get(ConfigMap.class, "rel-servegate-gateway").getData()
                .get("application.yaml"));
        return (Map<String, Object>) app.get("servegate");
    }

    /**
     * The commented {@code models} example in values.yaml, uncommented and rendered, runs images
     * that {@code bin/images} builds, at the chart's appVersion, and passes no {@code --model}
     * (the onnx image's entrypoint passes it).
     */
    @Test
    void valuesExampleRunsImagesThatBinImagesBuilds() throws Exception {
        List<String> lines = Files.readAllLines(CHART.resolve("values.yaml"));
        int start = lines.indexOf("models: []") + 1;
        StringBuilder example = new StringBuilder("models:\n");
        for (String line : lines.subList(start, lines.size())) {
            if (!line.startsWith("#")) {
                break;
            }
            if (line.startsWith("# -") || line.startsWith("#  ")) {
                example.append(line.substring(2)).append('\n');
            }
        }
        Path values = Files.createTempFile("values-example", ".yaml");
        Files.writeString(values, example);
        Manifests m = render(t -> t.withValuesFile(values));
        Files.delete(values);

        String appVersion = new Yaml().<Map<String, Object>>load(Files.readString(CHART.resolve("Chart.yaml")))
                .get("appVersion").toString();
        List<String> built = Files.readAllLines(Path.of("..", "..", "bin", "images")).stream()
                .filter(l -> l.matches("^# servegate/[a-z-]+ .*")).map(l -> l.split(" ")[1] + ":" + appVersion)
                .toList();
        Deployment model = m.items().stream().filter(Deployment.class::isInstance).map(Deployment.class::cast)
                .filter(d -> d.getMetadata().getName().contains("fmnist-cnn")).findFirst()
                .orElseThrow(() -> new AssertionError("no model Deployment in " + m.names()));
        Container c = model.getSpec().getTemplate().getSpec().getContainers().get(0);
        Container gw = m.get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0);
        assertThat(built).as("images bin/images builds").contains(c.getImage(), gw.getImage());
        assertThat(c.getArgs()).as("args of the example model").doesNotContain("--model");
        assertThat(env(c)).containsEntry("MODEL_NAME", "fmnist-cnn");
    }

    @Test
    void adminAndMetricsTokensComeFromSecrets() {
        Manifests m = render(t -> t.set("gateway.adminToken.existingSecret", "sg-admin")
                .set("gateway.metricsToken.existingSecret", "sg-metrics").set("gateway.metricsToken.key", "scrape"));
        Container c = m.get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0);
        Map<String, String> secrets = c.getEnv().stream().filter(e -> e.getValueFrom() != null
                        && e.getValueFrom().getSecretKeyRef() != null)
                .collect(Collectors.toMap(EnvVar::getName, e -> e.getValueFrom().getSecretKeyRef().getName() + "/"
                        + e.getValueFrom().getSecretKeyRef().getKey()));
        assertThat(secrets).containsEntry("SERVEGATE_ADMIN_TOKEN", "sg-admin/token")
                .containsEntry("SERVEGATE_METRICS_TOKEN", "sg-metrics/scrape");
        assertThat(render(t -> t).get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0).getEnv()).noneMatch(e -> e.getName().endsWith("_TOKEN"));
    }

    @Test
    void chartLintsCleanInStrictMode() {
        LintResult lint = new Helm(CHART).lint().strict().call();
        assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).noneMatch(msg -> msg.contains("[WARNING]") || msg.contains("[ERROR]"));
        assertThat(Files.exists(CHART.resolve("templates/NOTES.txt"))).isTrue();
    }

    @Test
    void defaultsRenderOneGatewayWithBundledRedisPortsProbesAndScrapeAnnotations() {
        Manifests m = render(t -> t);
        assertThat(m.names()).containsExactlyInAnyOrder(
                "ConfigMap/rel-servegate-gateway", "Deployment/rel-servegate-gateway", "Service/rel-servegate-gateway",
                "Service/rel-servegate-gateway-admin", "Deployment/rel-servegate-redis", "Service/rel-servegate-redis",
                "ServiceAccount/rel-servegate-gateway", "Role/rel-servegate-gateway",
                "RoleBinding/rel-servegate-gateway", "ConfigMap/rel-servegate-dashboard",
                "NetworkPolicy/rel-servegate-gateway-fleet");

        Deployment gw = m.get(Deployment.class, "rel-servegate-gateway");
        assertThat(gw.getSpec().getReplicas()).isEqualTo(1);
        assertThat(gw.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry("prometheus.io/scrape", "true").containsEntry("prometheus.io/port", "1337")
                .containsEntry("prometheus.io/path", "/metrics").containsKey("checksum/config");
        assertThat(gw.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("rel-servegate-gateway");
        Container c = gw.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("servegate/gateway-kubernetes:0.1.0");
        assertThat(c.getPorts()).extracting(p -> p.getName() + ":" + p.getContainerPort())
                .containsExactly("query:1337", "admin:1338", "grpc:8033", "fleet:8034");
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/v2/health/live");
        assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("query");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/v2/health/ready");
        assertThat(c.getResources().getRequests()).containsEntry("memory", new Quantity("512Mi"));
        assertThat(env(c)).containsEntry("SERVEGATE_REGISTRY_REDIS_URI", "redis://rel-servegate-redis:6379")
                .containsEntry("SERVEGATE_SELECTION_REDIS_URI", "redis://rel-servegate-redis:6379")
                .containsEntry("SPRING_CONFIG_ADDITIONAL_LOCATION", "optional:file:/etc/servegate/");
        assertThat(c.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("SERVEGATE_CONTAINERS_KUBERNETES_NAMESPACE");
            assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.namespace");
        });
        assertThat(c.getVolumeMounts()).singleElement().satisfies(v -> assertThat(v.getMountPath())
                .isEqualTo("/etc/servegate"));

        // the three form a fleet: each forwards to the others at their pod IPs
        assertThat(env(c)).containsEntry("SERVEGATE_FLEET_PORT", "8034");
        assertThat(c.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("SERVEGATE_FLEET_ADVERTISE_HOST");
            assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
        });
        Map<String, Object> config = servegateConfig(m);
        assertThat(config).containsEntry("registry", Map.of("store", "redis"))
                .containsEntry("selection", Map.of("store", "redis"))
                .containsEntry("admin", Map.of("port", 1338, "address", "0.0.0.0"))
                .containsEntry("oip", Map.of("grpc-port", 8033));
        assertThat(config.get("containers")).isEqualTo(Map.of("manager", "kubernetes", "kubernetes",
                Map.of("container-port", 8001, "probe", "grpc", "probe-command", List.of())));

        assertThat(m.get(Service.class, "rel-servegate-gateway").getSpec().getPorts())
                .extracting(ServicePort::getName, ServicePort::getPort, ServicePort::getAppProtocol).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("query", 1337, null),
                        org.assertj.core.groups.Tuple.tuple("grpc", 8033, "grpc"));
        assertThat(m.get(Service.class, "rel-servegate-gateway-admin").getSpec().getPorts())
                .extracting(ServicePort::getName, ServicePort::getPort).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("admin", 1338));
        assertThat(m.get(Service.class, "rel-servegate-redis").getSpec().getPorts().get(0).getPort()).isEqualTo(6379);
        Container redis = m.get(Deployment.class, "rel-servegate-redis").getSpec().getTemplate().getSpec()
                .getContainers().get(0);
        assertThat(redis.getImage()).startsWith("redis:");
        assertThat(redis.getReadinessProbe().getExec().getCommand()).containsExactly("redis-cli", "ping");
        io.fabric8.kubernetes.api.model.rbac.Role role = m.get(io.fabric8.kubernetes.api.model.rbac.Role.class,
                "rel-servegate-gateway");
        assertThat(role.getRules()).anySatisfy(r -> assertThat(r.getResources()).containsExactly("deployments/scale"));
        assertThat(role.getRules()).anySatisfy(r -> {
            assertThat(r.getResources()).containsExactly("pods");
            assertThat(r.getVerbs()).contains("watch");
        });
    }

    @Test
    void theGrafanaDashboardIsAConfigMapForTheSidecarUnlessTurnedOff() throws Exception {
        JsonMapper json = new JsonMapper();
        ConfigMap dashboard = render(t -> t).get(ConfigMap.class, "rel-servegate-dashboard");
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1")
                .containsEntry("app.kubernetes.io/component", "dashboard");
        assertThat(dashboard.getMetadata().getNamespace()).isEqualTo("serving");
        assertThat(dashboard.getData()).containsOnlyKeys("servegate.json");
        JsonNode shipped = json.readTree(dashboard.getData().get("servegate.json"));
        assertThat(shipped).isEqualTo(json.readTree(Files.readString(CHART.resolve("dashboards/servegate.json"))));
        assertThat(shipped.get("uid").asString()).isEqualTo("servegate-gateway");
        assertThat(shipped.get("panels").size()).isPositive();

        ConfigMap moved = render(t -> t.set("grafana.dashboard.namespace", "monitoring")
                .set("grafana.dashboard.label", "grafana_dashboard_servegate").set("grafana.dashboard.labelValue", "yes")
                .set("grafana.dashboard.annotations.grafana_folder", "Servegate"))
                .get(ConfigMap.class, "rel-servegate-dashboard");
        assertThat(moved.getMetadata().getNamespace()).isEqualTo("monitoring");
        assertThat(moved.getMetadata().getLabels()).containsEntry("grafana_dashboard_servegate", "yes")
                .doesNotContainKey("grafana_dashboard");
        assertThat(moved.getMetadata().getAnnotations()).containsEntry("grafana_folder", "Servegate");

        assertThat(render(t -> t.set("grafana.dashboard.enabled", false)).names())
                .doesNotContain("ConfigMap/rel-servegate-dashboard");
    }

    /**
     * A fleet's gateways share a secret from a Secret (a named one, or by default the one the chart
     * makes once at install: a hook, which helm-java's template leaves out) and only they reach the
     * fleet port: the NetworkPolicy admits the gateway pods there and leaves the public ports as
     * open as before. Without Redis there is no fleet, and neither is rendered.
     */
    @Test
    void theFleetPortTakesTheSecretFromASecretAndOnlyTheGateways() throws Exception {
        Manifests m = render(t -> t.set("gateway.replicaCount", 3));
        Deployment gw = m.get(Deployment.class, "rel-servegate-gateway");
        assertThat(fleetSecretRef(gw)).isEqualTo("rel-servegate-fleet/secret");
        String made = Files.readString(CHART.resolve("templates/fleet-secret.yaml"));
        assertThat(made).contains("name: {{ include \"servegate.fleetSecretName\" . }}", "randAlphaNum 40",
                "\"helm.sh/hook\": pre-install").doesNotContain("pre-upgrade");

        NetworkPolicy policy = m.get(NetworkPolicy.class, "rel-servegate-gateway-fleet");
        Map<String, String> gateways = gw.getSpec().getSelector().getMatchLabels();
        assertThat(policy.getSpec().getPodSelector().getMatchLabels()).isEqualTo(gateways);
        assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
        List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress();
        assertThat(rules).hasSize(2);
        assertThat(rules.get(0).getFrom()).isEmpty();
        assertThat(rules.get(0).getPorts()).extracting(p -> p.getPort().getStrVal())
                .containsExactly("query", "admin", "grpc").doesNotContain("fleet");
        assertThat(rules.get(1).getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("fleet");
        assertThat(rules.get(1).getFrom()).singleElement().satisfies(peer -> {
            assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(gateways);
            assertThat(peer.getNamespaceSelector()).isNull();
            assertThat(peer.getIpBlock()).isNull();
        });
        // the named ports are the gateway container's
        assertThat(gw.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
                .extracting(p -> p.getName()).contains("query", "admin", "grpc", "fleet");

        Manifests named = render(t -> t.set("gateway.fleetSecret.existingSecret", "sg-fleet")
                .set("gateway.fleetSecret.key", "hop").set("gateway.fleetNetworkPolicy", false));
        assertThat(named.names()).doesNotContain("NetworkPolicy/rel-servegate-gateway-fleet");
        assertThat(fleetSecretRef(named.get(Deployment.class, "rel-servegate-gateway"))).isEqualTo("sg-fleet/hop");

        Manifests solo = render(t -> t.set("redis.enabled", false));
        assertThat(solo.names()).noneMatch(n -> n.startsWith("Secret/") || n.startsWith("NetworkPolicy/"));
        assertThat(solo.get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0).getEnv()).noneMatch(e -> e.getName().startsWith("SERVEGATE_FLEET_"));
    }

    private static String fleetSecretRef(Deployment gw) {
        return gw.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> e.getName().equals("SERVEGATE_FLEET_SECRET")).findFirst()
                .map(e -> e.getValueFrom().getSecretKeyRef().getName() + "/" + e.getValueFrom().getSecretKeyRef().getKey())
                .orElseThrow(() -> new AssertionError("no SERVEGATE_FLEET_SECRET"));
    }

    @Test
    void oipGrpcPortZeroTurnsTheGrpcServerAndItsPortsOff() {
        Manifests m = render(t -> t.set("gateway.oipGrpcPort", 0));
        Container c = m.get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0);
        assertThat(c.getPorts()).extracting(p -> p.getName()).containsExactly("query", "admin", "fleet");
        assertThat(m.get(Service.class, "rel-servegate-gateway").getSpec().getPorts())
                .extracting(ServicePort::getName).containsExactly("query");
        assertThat(servegateConfig(m)).containsEntry("oip", Map.of("grpc-port", 0));
    }

    @Test
    void threeGatewaysShareAnExternalRedisWhosePasswordComesFromASecret() {
        Manifests m = render(t -> t.withValuesFile(VALUES.resolve("external-redis-3-gateways.yaml")));
        assertThat(m.names()).doesNotContain("Deployment/rel-servegate-redis", "Service/rel-servegate-redis");
        Deployment gw = m.get(Deployment.class, "rel-servegate-gateway");
        assertThat(gw.getSpec().getReplicas()).isEqualTo(3);
        Container c = gw.getSpec().getTemplate().getSpec().getContainers().get(0);
        // Kubernetes expands $(REDIS_PASSWORD) from the earlier env entry
        assertThat(env(c)).containsEntry("SERVEGATE_REGISTRY_REDIS_URI", "redis://:$(REDIS_PASSWORD)@redis.example:6380")
                .containsEntry("SERVEGATE_SELECTION_REDIS_URI", "redis://:$(REDIS_PASSWORD)@redis.example:6380");
        List<String> order = c.getEnv().stream().map(EnvVar::getName).toList();
        assertThat(order.indexOf("REDIS_PASSWORD")).isLessThan(order.indexOf("SERVEGATE_REGISTRY_REDIS_URI"));
        assertThat(c.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("REDIS_PASSWORD");
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("servegate-redis");
            assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("redis-password");
        });
        Map<String, Object> config = servegateConfig(m);
        assertThat(config).containsEntry("registry", Map.of("store", "redis"))
                .containsEntry("batching", Map.of("batch-wait", "2ms"));

        assertThatThrownBy(() -> render(t -> t.set("redis.enabled", false).set("gateway.replicaCount", 3)))
                .hasMessageContaining("needs a shared registry");
        Manifests single = render(t -> t.set("redis.enabled", false));
        assertThat(servegateConfig(single)).doesNotContainKey("registry");
        assertThat(env(single.get(Deployment.class, "rel-servegate-gateway").getSpec().getTemplate().getSpec()
                .getContainers().get(0))).doesNotContainKey("SERVEGATE_REGISTRY_REDIS_URI");
    }

    @Test
    void modelContainersFromValuesGetDeploymentsWithGpusAndReadinessProbes() {
        Manifests m = render(t -> t.withValuesFile(VALUES.resolve("two-gpu-models.yaml")));
        Deployment cnn = m.get(Deployment.class, "rel-servegate-fmnist-cnn-1");
        assertThat(cnn.getSpec().getReplicas()).isEqualTo(2);
        assertThat(cnn.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry("servegate.io/model", "fmnist-cnn").containsEntry("servegate.io/version", "1");
        Container c = cnn.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("registry.example/servegate/onnx-container:0.1.0");
        assertThat(c.getArgs()).containsExactly("--model", "/models/fmnist-cnn.onnx");
        assertThat(env(c)).containsEntry("MODEL_NAME", "fmnist-cnn").containsEntry("MODEL_VERSION", "1")
                .containsEntry("PORT", "8001").containsEntry("HOST", "0.0.0.0").containsEntry("INPUT_TYPE", "floats")
                .containsEntry("CONCURRENCY", "2");
        assertThat(c.getPorts()).singleElement().satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(8001));
        assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("1"))
                .containsEntry("memory", new Quantity("2Gi"));
        assertThat(c.getResources().getRequests()).containsEntry("cpu", new Quantity("1"));
        assertThat(c.getReadinessProbe().getGrpc().getPort()).isEqualTo(8001);

        Deployment triton = m.get(Deployment.class, "rel-servegate-digits-sk-2-0");
        Container t = triton.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(triton.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry("servegate.io/model", "digits_sk").containsEntry("servegate.io/version", "2.0");
        assertThat(env(t)).containsEntry("PORT", "9001").containsEntry("INPUT_TYPE", "doubles");
        assertThat(t.getResources().getLimits()).containsExactly(Map.entry("nvidia.com/gpu", new Quantity("2")));
        assertThat(t.getReadinessProbe().getGrpc()).isNull();
        assertThat(t.getReadinessProbe().getExec().getCommand())
                .containsExactly("curl", "-sf", "localhost:8000/v2/health/ready");

        Service svc = m.get(Service.class, "rel-servegate-digits-sk-2-0");
        assertThat(svc.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(svc.getSpec().getPorts().get(0).getPort()).isEqualTo(9001);
        assertThat(svc.getSpec().getSelector()).containsEntry("servegate.io/model", "digits_sk");

        // helm-java's template leaves hooks out, so the post-install registration Job is not among them
        assertThat(m.names()).noneMatch(n -> n.startsWith("Job/"));

        assertThatThrownBy(() -> render(o -> o.set("models[0].name", "x").set("models[0].version", "1")))
                .hasMessageContaining("models[0] needs name, version and image");
    }
}
