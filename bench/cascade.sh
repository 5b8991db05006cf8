#!/usr/bin/env bash
# A Fashion-MNIST cascade through the real gateway with real containers (each in its own JVM):
# accuracy, CNN queries and latency of fmnist-cnn alone, of each first model alone, and of the
# pipelines "first model, then fmnist-cnn when its confidence is below θ" (docs/pipelines.md).
# Usage: bench/cascade.sh [CascadeBenchmark options, e.g. --images 10000 --warmup 1000 --clients 1
#        --thresholds 0.9,0.95,0.99 --first-models fmnist-logreg,fmnist-tiny --slo-ms 100
#        --plan-us 50000,49000 (the two stages' deadline_micros; none by default)]
# Results: bench/results/cascade.json and cascade.md (a table, also on standard output).
# Needs Debian's dataset-fashion-mnist. SKIP_BUILD=1 skips the (incremental) Maven build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/gateway-bench-main.sh
run_gateway_bench_main -- io.servegate.gateway.bench.CascadeBenchmark "$@"
