#!/usr/bin/env bash
# What a shadow rollout costs the current version, live: one gateway, version 1 on its own emulated
# replica (a batch of b takes 10 + 1·b ms, SLO 50 ms: capacity 600/s as the simulator computes it),
# candidates on replicas of their own (equal; slow: 3× the batch time; stuck: 1000×), one app at
# 0.8× capacity (480/s Poisson). Legs without a rollout and with a shadow rollout alternate on the
# same gateway (A B, then B A), 5 s to settle before each; reports goodput with/without, p50/p99,
# copies sent and dropped, and the load average.
# Usage: bench/shadow-cost.sh [shadow-cost options, e.g. --variants equal:1,equal:0.1,slow:1,stuck:1
#        --rounds 3 --duration-s 20 --warmup-s 30 --gateway-arg=--servegate.rollouts.shadow-max-in-flight=64]
# Results: bench/results/shadow-cost-<UTC timestamp>/ (shadow-cost.json, gateway and container logs,
# the gateway's last metrics scrape). With the defaults (2 variants, 2 rounds) it takes ~4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" shadow-cost --gateway-jar "$GATEWAY_JAR" "$@"
