package io.servegate.gateway.containers.kubernetes;

import io.servegate.gateway.containers.kubernetes.KubernetesContainerManager.Settings.ProbeKind;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code servegate.containers.kubernetes.*}: the {@code kubernetes} manager's own settings (fabric8;
 * in-cluster service account or kubeconfig), besides the shared {@code servegate.containers.*} ones.
 *
 * @param namespace     namespace of the model Deployments and pods; empty = the client's own (in a pod: the pod's)
 * @param containerPort the OIP gRPC port every model container listens on (its {@code PORT})
 * @param probe         the pods' readiness probe: {@code grpc} (grpc.health.v1), {@code exec} (probe-command)
 *                      or {@code none}
 * @param probeCommand  the {@code exec} probe's command
 * @param resync        how often every watched pod is re-examined
 */
public record KubernetesProperties(
        @DefaultValue("") String namespace,
        @DefaultValue("8001") int containerPort,
        @DefaultValue("grpc") ProbeKind probe,
        @DefaultValue List<String> probeCommand,
        @DefaultValue("5m") Duration resync) {
}
