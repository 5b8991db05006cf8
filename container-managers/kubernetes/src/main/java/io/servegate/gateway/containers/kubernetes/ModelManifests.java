package io.servegate.gateway.containers.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.servegate.gateway.containers.DeploymentSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Kubernetes objects of a model version: its {@code Deployment} (one container, with the
 * spec's image, command, environment and resource limits, and the configured readiness probe)
 * and its headless {@code Service}, named and labelled as {@link KubernetesContainerManager}
 * finds them again.
 */
final class ModelManifests {

    /** Deployment and pod names get a suffix of up to 17 characters; keep pod host names within 63. */
    static final int MAX_NAME_LENGTH = 46;

    private final KubernetesContainerManager.Settings settings;

    ModelManifests(KubernetesContainerManager.Settings settings) {
        this.settings = settings;
    }

    /**
     * The name of a model version's Deployment and Service: a DNS-1035 label ({@code sg-} +
     * model + {@code -} + version, lower case, {@code [a-z0-9-]}). Names that had to be changed
     * ({@code .} and {@code _} are not allowed) or shortened get a hash of the exact names, so two
     * model versions never share one.
     */
    static String resourceName(String model, String version) {
        String raw = "sg-" + model + "-" + version;
        String clean = raw.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (clean.equals(raw) && clean.length() <= MAX_NAME_LENGTH) {
            return clean;
        }
        String hash = sha256Hex(model + ":" + version).substring(0, 8);
        String head = clean.substring(0, Math.min(clean.length(), MAX_NAME_LENGTH - hash.length() - 1));
        return head.replaceAll("-+$", "") + "-" + hash;
    }

    io.fabric8.kubernetes.api.model.apps.Deployment deployment(String name, DeploymentSpec spec) {
        Map<String, String> labels = labels(spec.modelName(), spec.modelVersion());
        return new DeploymentBuilder()
                .withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withNewSpec()
                .withReplicas(spec.replicas())
                .withNewSelector().withMatchLabels(labels).endSelector()
                .withNewTemplate()
                .withNewMetadata().withLabels(labels).endMetadata()
                .withNewSpec().withContainers(container(spec)).endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    private Container container(DeploymentSpec spec) {
        List<EnvVar> env = new ArrayList<>();
        Map<String, String> vars = new LinkedHashMap<>();
        vars.put("MODEL_NAME", spec.modelName());
        vars.put("MODEL_VERSION", spec.modelVersion());
        vars.put("PORT", Integer.toString(settings.containerPort()));
        vars.put("HOST", "0.0.0.0");
        spec.env().forEach(vars::putIfAbsent);
        vars.forEach((k, v) -> env.add(new EnvVar(k, v, null)));
        Map<String, Quantity> limits = new LinkedHashMap<>();
        DeploymentSpec.Resources r = spec.resources();
        if (r.cpus() > 0) {
            limits.put("cpu", new Quantity(Math.round(r.cpus() * 1000) + "m"));
        }
        if (r.memoryBytes() > 0) {
            limits.put("memory", new Quantity(Long.toString(r.memoryBytes())));
        }
        if (r.gpus() > 0) {
            limits.put("nvidia.com/gpu", new Quantity(Integer.toString(r.gpus())));
        }
        ContainerBuilder c = new ContainerBuilder()
                .withName("model")
                .withImage(spec.image())
                .withArgs(spec.command())
                .withEnv(env)
                .addNewPort().withName(KubernetesContainerManager.PORT_NAME).withContainerPort(settings.containerPort())
                .withProtocol("TCP").endPort()
                .withNewResources().withLimits(limits).endResources();
        Probe readiness = readinessProbe();
        if (readiness != null) {
            c.withReadinessProbe(readiness);
        }
        return c.build();
    }

    private Probe readinessProbe() {
        ProbeBuilder p = new ProbeBuilder().withPeriodSeconds(5).withTimeoutSeconds(2).withFailureThreshold(2);
        return switch (settings.probe()) {
            // service "" = the server as a whole, which our SDKs report SERVING exactly while ServerReady
            case GRPC -> p.withNewGrpc().withPort(settings.containerPort()).withService("").endGrpc().build();
            case EXEC -> p.withNewExec().withCommand(settings.probeCommand()).endExec().build();
            case NONE -> null;
        };
    }

    io.fabric8.kubernetes.api.model.Service service(String name, DeploymentSpec spec) {
        Map<String, String> labels = labels(spec.modelName(), spec.modelVersion());
        // headless: DNS answers with the pod addresses, so gRPC clients balance per replica as the gateway does
        return new ServiceBuilder()
                .withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withNewSpec()
                .withClusterIP("None")
                .withSelector(labels)
                .addNewPort().withName(KubernetesContainerManager.PORT_NAME).withPort(settings.containerPort())
                .withNewTargetPort(KubernetesContainerManager.PORT_NAME).withProtocol("TCP").endPort()
                .endSpec()
                .build();
    }

    private static Map<String, String> labels(String model, String version) {
        // registry names are valid label values (at most 63 of [a-z0-9._-], alphanumeric at both ends)
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(KubernetesContainerManager.MANAGED_BY, KubernetesContainerManager.MANAGER);
        labels.put(KubernetesContainerManager.MODEL_LABEL, model);
        labels.put(KubernetesContainerManager.VERSION_LABEL, version);
        return labels;
    }


    private static String sha256Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
