#!/usr/bin/env bash
# A gateway's first seconds: for each case a fresh gateway process, the no-op model registered, and
# 800 req/s Poisson (SLO 20 ms) from the moment /v2/health/ready answers 200; the share of the
# first 5 s and of the next 5 s in SLO by the client's count and by the gateway's own, beside the
# time from the process's start to ready. Cases, one by one: warm-up off and on, each without and
# with a class-data sharing archive (made here, as bin/demo makes it, from the extracted jar), and
# the warm-up with C1 only (-XX:TieredStopAtLevel=1). The load average is in the report: on a
# shared machine it moves the figures.
# Usage: bench/cold-start.sh [--rate 800 --slo-ms 20 --duration-s 5]
# Results: bench/results/cold-start-<UTC timestamp>/ (cold-start.json, gateway logs, scrapes).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -Djarmode=tools -jar "$GATEWAY_JAR" extract --destination "$bench_jars/gateway" >/dev/null
jar="$bench_jars/gateway/$(basename "$GATEWAY_JAR")"
# one start that stops once the context is up records the classes it loaded (JDK CDS archive)
java -XX:ArchiveClassesAtExit="$bench_jars/gateway.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \
    -Dspring.context.exit=onRefresh -jar "$jar" --server.port=0 --servegate.admin.port=0 \
    --servegate.oip.grpc-port=0 >"$bench_jars/cds.log" 2>&1
cds="-XX:SharedArchiveFile=$bench_jars/gateway.jsa -Xlog:cds=off -Xlog:cds+dynamic=off"
off=--servegate.warmup.enabled=false
java -jar "$LOADGEN_JAR" cold-start --gateway-jar "$jar" \
    --case "off=$off" --case "warmup=" --case "off+cds=$cds $off" --case "warmup+cds=$cds" \
    --case "warmup+c1=-XX:TieredStopAtLevel=1" --case "warmup+cds+c1=$cds -XX:TieredStopAtLevel=1" "$@"
