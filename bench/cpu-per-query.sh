#!/usr/bin/env bash
# What the gateway costs in CPU per answered query, beside a floor: a bare Reactor Netty server
# that parses the same request and makes one OIP gRPC call per request (loadgen's FloorServer),
# both child processes calling the same noop container (in the load generator's JVM), at fixed
# open-loop rates (800, 1600, 4000 req/s by default), taking turns in each round. Per leg: CPU of
# the server process per answered query (/proc/<pid>/stat), heap bytes allocated per query (its
# ThreadMXBean over JMX), answered rate, p50/p99, share within the SLO, the load average; per
# rate the ratio gateway/floor. --baseline-gateway-jar OLD.jar measures another build in the
# same run (and gateway/baseline); --tracing-ratio 1,0.1 the gateway with tracing on at those
# sampling ratios (OTLP to a sink in the load generator; docs/tracing.md#cost). A Flight Recorder
# profile of the gateway:
#   --gateway-jvm-arg=-Xmx1g --gateway-jvm-arg=-XX:StartFlightRecording=filename=gw.jfr,settings=profile
# Usage: bench/cpu-per-query.sh [extra cpu-per-query options, e.g. --rate 1600 --rounds 3]
# Results: bench/results/cpu-per-query-<UTC timestamp>/ (cpu-per-query.json, the servers' logs)
# and a table on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" cpu-per-query --gateway-jar "$GATEWAY_JAR" "$@"
