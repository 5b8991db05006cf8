#!/usr/bin/env bash
# Clipper NSDI'17 Figure 8 at full scale (20,000 queries, the best model fmnist-cnn answering random
# labels for queries [5,000, 10,000), then recovered; static models, Exp3 default and eta=0.2, Exp4
# default) and a Figure 10 analogue (per-user vs app-wide Exp3/Exp4), replayed on the four real
# Fashion-MNIST ONNX models' outputs through the gateway's policy classes (test scope, no gateway).
# Usage: bench/selection-fig8.sh [Fig8Benchmark options, e.g. --queries 20000 --seeds 10 --policy-seed 1]
# Results: bench/results/fig8.{csv,png,json}, bench/results/fig10.{csv,png,json}, tables on standard output.
# SKIP_BUILD=1 skips the (incremental) Maven build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/gateway-bench-main.sh
run_gateway_bench_main -Djava.awt.headless=true -- io.servegate.gateway.selection.fig8.Fig8Benchmark "$@"
