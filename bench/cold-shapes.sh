#!/usr/bin/env bash
# Scheduling on real latency, live: this checkout's gateway beside others (--compare LABEL=JAR,
# e.g. one built from main) on a Python SDK container whose batch of b takes 10 + 1·b ms; SLO
# 50 ms, 400 req/s Poisson (two thirds of the 600/s optimum), default policy, a fresh container and
# gateway per run; cases control (no pathology), cold (the first batch of each size takes 300 ms
# more and the SDK warms up only a batch of one), cold-warmed (the SDK warms every size up to 32),
# stalls (the container stands still 200 ms every 5 s) and cpu-hog (the control with
# `stress-ng --cpu 2` beside the gateway); pathologies join with +, as in stalls+cpu-hog. Reports
# the client's count of answers later than SLO + 5 ms and the gateway's own of answers after the
# SLO (servegate_answers_late_total).
# Usage: bench/cold-shapes.sh [--compare main=PATH/gateway.jar] [--warmup-s 30 --duration-s 30
#        --cases control,cold,cold-warmed,stalls,cpu-hog,stalls+cpu-hog --rate 400 --hog-cpus 2]
# Results: bench/results/cold-shapes-<UTC timestamp>/ (cold-shapes.json, logs, metrics scrapes).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" cold-shapes "$@" --compare "this=$GATEWAY_JAR"
