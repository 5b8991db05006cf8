#!/usr/bin/env bash
# What the gateway costs: the noop container measured directly (OIP gRPC, batch 1) and through the
# gateway (POST /noop/predict, a child JVM on loopback, cache off) in the same run - closed loop
# with 8 clients (maximum throughput), then open loop at 500 and 2000 req/s (Poisson unless
# --arrivals gamma|trace; latency from the intended send); goodput within --slo-ms (1000).
# Usage: bench/gateway-overhead.sh [extra gateway-overhead options, e.g. --duration-s 30 --rate 1000]
# Results: bench/results/gateway-overhead-<UTC timestamp>/ (gateway-overhead.json, index.html,
# throughput.png, latency.png, the gateway's log and metrics scrape), and a table on standard output.
# Builds the load generator and the gateway first when their jars are missing or older than the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
# this benchmark's SLO unless one is given (loadgen's default, 20 ms, is the batching scenarios')
slo=(--slo-ms 1000); [[ " $* " == *" --slo-ms"* ]] && slo=()
java -jar "$LOADGEN_JAR" gateway-overhead --gateway-jar "$GATEWAY_JAR" "${slo[@]}" "$@"
