#!/usr/bin/env bash
# Batching gain (Clipper NSDI'17 Fig. 4/5 analogue): at a 20 ms SLO, open-loop load to one model under
# four batching strategies - none (batch size 1), fixed (16), AIMD (-1), AIMD + delayed batching
# (servegate.batching.batch-wait=2ms, a second gateway) - for the emulated container (a batch of b
# sleeps 5 + 0.5 b ms; 800 req/s) and the real fmnist-cnn ONNX model (a child JVM; 400 req/s).
# Usage: bench/batching-gain.sh [batching-gain options, e.g. --models emulated --duration-s 30
#        --emulated-rate 1200 --api oip --arrivals gamma --cv2 4]
# Results: bench/results/batching-gain-<UTC timestamp>/ (batching-gain.json, index.html, PNG plots,
# gateway and container logs). Takes ~3 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
if [[ ! -f containers/onnx/target/onnx-container.jar ]]; then
    mvn -q -pl containers/onnx -am package -Dmaven.test.skip=true
fi
java -jar "$LOADGEN_JAR" batching-gain --gateway-jar "$GATEWAY_JAR" "$@"
