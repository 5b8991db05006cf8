#!/usr/bin/env bash
# The autoscaler's capacity model against measured latency (issue 14): 1, 2 and 4 emulated
# replicas (5 ms per query) deployed through the gateway's process manager, sent one query at a
# time in arrival order (Clipper's policy, batch size 1), at 0.3, 0.5, 0.7 and 0.85 of c/l(1).
# M/D/c's mean latency on the scheduler's own profile against the scheduler's measured mean.
# Usage: bench/capacity.sh [capacity options, e.g. --replicas 2 --loads 0.5,0.8 --duration-s 10]
# Results: bench/results/capacity-<UTC timestamp>/ (capacity.json, capacity.html). ~6 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
[[ -f containers/emulated/target/emulated-container.jar ]] ||
  mvn -B -q -ntp -pl containers/emulated -am package -Dmaven.test.skip=true
java -jar "$LOADGEN_JAR" capacity --gateway-jar "$GATEWAY_JAR" "$@"
