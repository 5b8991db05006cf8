#!/usr/bin/env bash
# The gateway's scheduling policies side by side (issue 12): for each of clipper, clockwork and
# symphony a gateway started with --servegate.scheduling.policy=<policy>, on the same emulated
# containers (one process per replica, a batch of b sleeps beta + alpha*b ms) and the same Poisson
# or Gamma arrival schedules. Cases: one replica (beta 5 ms, alpha 0.5 ms, SLO 20 ms) at 800/s
# (0.8x its analytic capacity of 1,000/s), 2x and 4x; 8 replicas of Symphony's Table 4 ResNet50 row
# (alpha 1.053 ms, beta 5.072 ms, SLO 25 ms) at 5,839/s; one replica at 800/s with Gamma arrivals
# (CV^2 4). Goodput is set against the analytic optimum at each offered rate, answers later than
# SLO + 2 ms against a bare timer thread's late wake-ups in the same window.
# Usage: bench/scheduling.sh [scheduling options, e.g. --policies symphony --cases r1-2x,r8-table4
#        --duration-s 10 --warmup-s 2 --jvm-warmup-s 10]
# Results: bench/results/scheduling-<UTC timestamp>/ (scheduling.json, index.html, PNG plots, the
# gateways' and containers' logs and the gateways' metrics scrapes).
# Takes ~11 minutes with the defaults (3 policies x 5 cases x (5 s warm-up + 20 s measured), plus a
# 30 s JVM warm-up per gateway).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" scheduling --gateway-jar "$GATEWAY_JAR" "$@"
