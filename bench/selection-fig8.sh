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
mkdir -p bench/results
cp_file=gateway/target/bench-test-classpath.txt
if [[ "${SKIP_BUILD:-0}" != 1 || ! -f "$cp_file" ]]; then
    echo "building the gateway's test classes..." >&2
    mvn -q -pl gateway -am test-compile -DskipTests
    mvn -q -pl gateway dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/$cp_file" >/dev/null
fi
# the model files are found relative to the gateway directory (../containers/onnx/models)
cd gateway
# The class path goes in an argument file, not on the command line: ONNX Runtime (1.29.0, native
# code) segfaults at session creation when the JVM's command line is longer than about 4 KiB.
args_file=target/bench-test-classpath.args
printf -- '-cp target/test-classes:target/classes:%s\n' "$(cat "../$cp_file")" > "$args_file"
exec java -Djava.awt.headless=true "@$args_file" \
    io.servegate.gateway.selection.fig8.Fig8Benchmark --out ../bench/results "$@"
