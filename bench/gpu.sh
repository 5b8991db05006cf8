#!/usr/bin/env bash
# The image classifier (containers/image-classifier) behind the gateway: its in-process capacity,
# then goodput over offered rate x scheduling policy (bench/gpu_sweep.py), one JSON + HTML report.
#
#   bench/gpu.sh kit          here: bench/gpu-kit/ with a jlink'd Java runtime and the unpacked
#                             gateway (xz), and the SDK's protobuf modules, to carry to a
#                             GPU machine that has no Java (carry bench/gpu-kit and
#                             model-container-sdk/python/servegate/_generated)
#   bench/gpu.sh [options]    on a GPU machine: ResNet-50, 224 x 224, fp16 on CUDA, SLO 50 ms;
#                             on a machine without CUDA: ResNet-18, 32 x 32 images on the CPU, short
#                             legs, so that the script itself is exercised anywhere
# Options go to bench/gpu_sweep.py (--rates, --policies, --slo-ms, --seconds, ...). Real latency
# (docs/scheduling.md): --rates 0.5,0.9,2,4 --warmup-batch-sizes 1, once with cuDNN autotuning
# (the default) and once with --no-cudnn-benchmark.
# Results: $OUT/gpu-<UTC timestamp>/ when OUT is set (a device machine's output folder), else
# bench/results/gpu-<UTC timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
kit=bench/gpu-kit

if [[ "${1:-}" == kit ]]; then
    source bench/gateway-jar.sh
    rm -rf "$kit" && mkdir -p "$kit"
    work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
    jlink --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,java.desktop,java.instrument,java.scripting,java.security.jgss,java.compiler,jdk.unsupported,jdk.crypto.ec,jdk.management,jdk.zipfs,jdk.naming.dns,jdk.jfr,jdk.management.jfr \
        --strip-debug --no-man-pages --no-header-files --compress=0 --output "$work/jre"
    tar -C "$work" -cf - jre | xz -9 -T0 > "$kit/jre.tar.xz"
    mkdir -p "$work/gateway" && (cd "$work/gateway" && unzip -q "$OLDPWD/$GATEWAY_JAR")
    mkdir -p "$work/kit-gateway/lib"
    mv "$work/gateway/BOOT-INF/classes" "$work/kit-gateway/classes"
    # the process and external managers are what a benchmark needs: no Kubernetes, Docker or QUIC
    find "$work/gateway/BOOT-INF/lib" -name '*.jar' ! -name 'kubernetes-*' ! -name 'docker-java-*' \
        ! -name 'bcp*' ! -name '*quic*' -exec mv {} "$work/kit-gateway/lib/" \;
    # stored, not deflated, so that xz compresses the classes themselves: about a third smaller
    for j in "$work"/kit-gateway/lib/*.jar; do
        rm -rf "$work/x" && mkdir "$work/x" && (cd "$work/x" && unzip -q "$j" && rm "$j" && zip -q -0 -r -X "$j" .)
    done
    tar -C "$work" -cf - kit-gateway | xz -9 -T0 > "$kit/gateway.tar.xz"
    (cd model-container-sdk/python && /usr/bin/python3 -m servegate.build)
    du -sh "$kit"/*
    exit 0
fi

python=python3
if ! "$python" -c 'import torch, torchvision, grpc' 2>/dev/null; then
    python=/usr/bin/python3
fi
if [[ -f "$kit/gateway.tar.xz" ]]; then
    run=$(mktemp -d) && trap 'rm -rf "$run"' EXIT
    xz -dc "$kit/jre.tar.xz" | tar -C "$run" -xf -
    xz -dc "$kit/gateway.tar.xz" | tar -C "$run" -xf -
    gateway=("$run/jre/bin/java" -Xmx2g -cp "$run/kit-gateway/classes:$run/kit-gateway/lib/*"
        io.servegate.gateway.GatewayApplication)
else
    source bench/gateway-jar.sh
    gateway=(java -Xmx2g -jar "$(pwd)/$GATEWAY_JAR")
fi
out=${OUT:-bench/results}/gpu-$(date -u +%Y%m%dT%H%M%SZ)
if "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    settings=(--device cuda)
else
    settings=(--device cpu --arch resnet18 --image-size 32 --max-batch-size 16 --profile-iterations 10
        --rates 0.5,1,2 --seconds 5 --warmup-seconds 3 --slo-ms 200 --processes 2 --connections 8)
fi
"$python" bench/gpu_sweep.py --gateway "$(printf '%q ' "${gateway[@]}")" --out "$out" "${settings[@]}" "$@"
