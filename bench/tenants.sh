#!/usr/bin/env bash
# Tiers and weights live: apps sharing one model version. Per case a fresh emulated container (a
# batch of b takes 10 + 1·b ms) and a fresh gateway (default policy), SLO 50 ms, one Poisson stream
# per app at its load times the capacity (600/s, as `bin/sim tenants --rate 600`). Cases: 2x-tiers
# (critical 0.5× beside sheddable 1.5×), 2x-weights (two standard apps of weights 1 and 3, 1× each)
# and 0.7x (critical 0.35× beside sheddable 0.35×, then each alone). Reports per app in SLO, late
# answers by the client's count (later than SLO + 5 ms) and the gateway's (after the SLO), shed and
# other defaults, each app's share of the model time (servegate_model_time_seconds_total) and, at
# 0.7×, its goodput against its goodput alone; checks issue #36's criteria.
# Usage: bench/tenants.sh [--cases 2x-tiers,2x-weights,0.7x --warmup-s 30 --duration-s 30
#        --rate 600 | --apps c:critical@0.5,s:sheddable@1.5 [--alone]
#        --gateway-arg=--servegate.scheduling.policy=clockwork]
# Results: bench/results/tenants-<UTC timestamp>/ (tenants.json, logs and metrics scrapes).
# Takes ~6 minutes with the defaults (four 60 s windows and a fresh gateway per case).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" tenants --gateway-jar "$GATEWAY_JAR" "$@"
