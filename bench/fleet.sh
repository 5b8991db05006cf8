#!/usr/bin/env bash
# A fleet of gateways live: two replicas (Python SDK containers, a batch of b takes 10 + 1·b ms),
# SLO 50 ms, 700 req/s Poisson; first one gateway alone (in-memory registry), then three gateways
# sharing a redis-server of their own, the load sent round robin across them. Reports the fleet's
# goodput over the single gateway's and what forwarding adds to the median (owner's predictions
# against the others'). Then, under the same load and 20 feedback/s to an exp3 app, kill -9 of
# the gateway owning the model version: when predictions resumed, a per-second timeline, and the
# feedback acknowledged against the feedback stored.
# Usage: bench/fleet.sh [fleet options, e.g. --rate 700 --warmup-s 60 --duration-s 30
#        --before-kill-s 10 --after-kill-s 20 --gateway-arg=--servegate.fleet.lease=2s]
# Results: bench/results/fleet-<UTC timestamp>/ (fleet.json, logs and metrics scrapes of every
# gateway). Needs redis-server on the PATH and /usr/bin/python3 with grpcio. Takes ~5 minutes.
# Three fresh gateway JVMs on 2 cores need the 60 s warm-up: after 20 s they were still shedding
# (docs/scheduling.md, "A fleet of gateways").
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" fleet --gateway-jar "$GATEWAY_JAR" "$@"
