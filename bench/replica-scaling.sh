#!/usr/bin/env bash
# Replica scaling (Clipper NSDI'17 Fig. 6 analogue): one model with 1, 2, 4 emulated replicas (a batch
# of b sleeps 20 + 2 b ms, fixed batch size 8), closed loop with 32 clients per replica; throughput
# and p99. The emulated containers sleep, so on 2 cores the replicas do not compete for CPU.
# Usage: bench/replica-scaling.sh [replica-scaling options, e.g. --replicas 1,2,4,8 --duration-s 30]
# Results: bench/results/replica-scaling-<UTC timestamp>/ (replica-scaling.json, index.html, PNGs).
# Takes ~1 minute with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
# this benchmark's SLO unless one is given (loadgen's default, 20 ms, is the batching scenarios')
slo=(--slo-ms 1000); [[ " $* " == *" --slo-ms"* ]] && slo=()
java -jar "$LOADGEN_JAR" replica-scaling --gateway-jar "$GATEWAY_JAR" "${slo[@]}" "$@"
