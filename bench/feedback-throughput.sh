#!/usr/bin/env bash
# Feedback throughput (Clipper NSDI'17 4.2 reported ~6K feedback observations/s without, ~11K with
# prediction cache hits): a real redis-server for the selection states, the gateway and the four
# Fashion-MNIST ONNX models as in-process containers, one exp4 app; closed-loop POST /fb/update with
# 16 clients (wrk, a separate process, for the cache-hit phases; --client jvm for the benchmark's own
# client in the gateway's JVM): (a) inputs predicted beforehand (cache hits), (b) the same with a per-user state
# (uid = i % 1000), (c) inputs never seen (the gateway queries the four models for the join), and the
# control predict-hits (POST /fb/predict of the inputs of (a), cached: what the same bodies cost without
# feedback); then the raw Redis floor: the observe script one feedback ran, captured with redis-cli
# MONITOR and replayed by redis-benchmark with the same clients, and each phase's ratio to it.
# Usage: bench/feedback-throughput.sh [FeedbackThroughputBenchmark options, e.g. --clients 16
#        --duration-s 10 --warmup-s 3 --warm-images 2000 --users 1000 --phases predict-hits,cache-hits,cache-misses
#        --floor-requests 100000 --client wrk|jvm]
# Results: bench/results/feedback-throughput.json, and a table on standard output.
# Needs wrk (unless --client jvm), redis-server, redis-cli and redis-benchmark on the PATH (or next to $REDIS_SERVER). SKIP_BUILD=1 skips the (incremental) Maven build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/gateway-bench-main.sh
run_gateway_bench_main -Dslf4j.provider=ch.qos.logback.classic.spi.LogbackServiceProvider -- io.servegate.gateway.bench.FeedbackThroughputBenchmark "$@"
