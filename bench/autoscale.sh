#!/usr/bin/env bash
# The autoscaler live (issue 14): one model of emulated containers (a batch of b sleeps 5 + 0.5*b
# ms), deployed through the gateway's process manager with min 1 / max 8 replicas, SLO 50 ms,
# under open-loop Poisson load of 200/s for 60 s, 3,000/s for 60 s and 200/s for 90 s (after a
# 20 s warm-up at 200/s). Every second it samples the replicas asked for and ready; it reports
# goodput per step after its first 10 s, the autoscaler's decisions, and a plot of rate,
# goodput and replicas over time.
# Usage: bench/autoscale.sh [autoscale options, e.g. --steps 200:30,3000:30,200:60 --cooldown-s 10]
# Results: bench/results/autoscale-<UTC timestamp>/ (autoscale.json, autoscale.html, autoscale.png,
# the gateway's log and metrics scrape). Takes ~4 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
[[ -f containers/emulated/target/emulated-container.jar ]] ||
  mvn -B -q -ntp -pl containers/emulated -am package -Dmaven.test.skip=true
# this benchmark's SLO unless one is given (loadgen's default, 20 ms, is the batching scenarios')
slo=(--slo-ms 50); [[ " $* " == *" --slo-ms"* ]] && slo=()
java -jar "$LOADGEN_JAR" autoscale --gateway-jar "$GATEWAY_JAR" "${slo[@]}" "$@"
