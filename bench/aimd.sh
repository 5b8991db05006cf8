#!/usr/bin/env bash
# The gateway's AIMD batch sizing in real time: an emulated container (a batch of b takes
# 5 + 0.5 b ms) behind the gateway, app SLO 20 ms, 2000 req/s of Poisson arrivals for 20 s after a
# 30 s warm-up (the gateway's JIT); the replica's max_batch_size is polled every 100 ms and compared
# with b* = floor((SLO - beta) / alpha) = 30. Over the same window a bare timer thread in a JVM of its
# own measures how late this machine wakes any thread (the control; --no-timer-control skips it).
# Usage: bench/aimd.sh [extra aimd options, e.g. --rate 1500 --slo-ms 30]
# Results: bench/results/aimd-<UTC timestamp>/aimd.json, the gateway's log and metrics scrape
# (bench/results/gateway-aimd{.log,-metrics.txt}), and a summary on standard output.
# Builds the load generator and the gateway first when their jars are missing or older than the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" aimd --gateway-jar "$GATEWAY_JAR" "$@"
