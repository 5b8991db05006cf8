#!/usr/bin/env bash
# Feedback throughput (Clipper NSDI'17 4.2 reported ~6K feedback observations/s without, ~11K with
# prediction cache hits): a real redis-server for the selection states, the gateway and the four
# Fashion-MNIST ONNX models as in-process containers, one exp4 app; closed-loop POST /fb/update with
# 16 clients: (a) inputs predicted beforehand (cache hits), (b) the same with a per-user state
# (uid = i % 1000), (c) inputs never seen (the gateway queries the four models for the join).
# Usage: bench/feedback-throughput.sh [FeedbackThroughputBenchmark options, e.g. --clients 16
#        --duration-s 10 --warmup-s 3 --warm-images 2000 --users 1000 --phases cache-hits,cache-misses]
# Results: bench/results/feedback-throughput.json, and a table on standard output.
# Needs redis-server on the PATH (or $REDIS_SERVER). SKIP_BUILD=1 skips the (incremental) Maven build.
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
exec java -Dslf4j.provider=ch.qos.logback.classic.spi.LogbackServiceProvider "@$args_file" \
    io.servegate.gateway.bench.FeedbackThroughputBenchmark --out ../bench/results "$@"
