#!/usr/bin/env bash
# A fleet of gateways live: two replicas (Python SDK containers, a batch of b takes 10 + 1·b ms),
# SLO 50 ms, 700 req/s Poisson; first one gateway alone (in-memory registry), then three gateways
# sharing a redis-server of their own, the load sent round robin across them. Reports the fleet's
# goodput over the single gateway's and what forwarding adds to the median (owner's predictions
# against the others'). Then the bulk phase (--bulk-s, 10 s; 0 skips it): under the same load, every
# --bulk-every-s (2 s) a request of --bulk-rows (250) rows to an app with a --bulk-slo-ms (1 s) SLO
# goes to a gateway that does not own the version: each request's latency and rows predicted, and
# the queries per forward call. Then, under the same load and 20 feedback/s to an exp3 app, kill -9 of
# the gateway owning the model version (--owner-stop term: SIGTERM, a graceful shutdown): when
# predictions resumed, the queries lost in the 10 s after the stop, a per-second timeline, the
# queries sent and lost in each 100 ms from 0.5 s before the stop to 1.5 s after it, and the
# feedback acknowledged against the feedback stored. Then the join: the two gateways left take the
# same load for --join-s (20 s, the steady period; 0 skips the phase), a new gateway (gw3) starts, and
# once its /v2/health/ready answers 200 the client adds it to its round robin, as a load balancer
# would; the load goes on --after-join-s (15 s) from then. Reports the share of queries lost
# (defaults, failures, predictions after the SLO) in the first 10 s from the new gateway's start
# and from its readiness against the steady period's, its start-to-ready time, a per-second
# timeline, every change of get_fleet (which versions moved, when) and the load average at each step.
# Usage: bench/fleet.sh [fleet options, e.g. --rate 700 --warmup-s 60 --duration-s 30
#        --before-kill-s 10 --after-kill-s 20 --join-s 20 --after-join-s 15
#        --gateway-arg=--servegate.fleet.lease=2s]
# Results: bench/results/fleet-<UTC timestamp>/ (fleet.json, logs and metrics scrapes of every
# gateway). Needs redis-server on the PATH and /usr/bin/python3 with grpcio. Takes ~6 minutes.
# Three fresh gateway JVMs on 2 cores need the 60 s warm-up: after 20 s they were still shedding
# (docs/scheduling.md, "A fleet of gateways"). The join needs no warm-up of the client's: it runs
# on the gateways that already served the earlier phases, and the new one warms itself up before
# it reports ready (its warm-up lasts at most servegate.warmup.max-duration, 30 s). A short run of every phase:
# --warmup-s 10 --duration-s 10 --before-kill-s 5 --after-kill-s 10 --join-s 10 --after-join-s 12
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" fleet --gateway-jar "$GATEWAY_JAR" "$@"
