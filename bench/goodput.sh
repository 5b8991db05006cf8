#!/usr/bin/env bash
# Goodput (predictions within the SLO, not defaults) of the emulated container behind the gateway
# with AIMD batching: (1) SLOs 10, 20, 50, 100 ms at 1000 req/s; (2) SLO 20 ms at 0.5x, 1x, 1.5x, 2x
# the capacity measured first (closed loop, 64 clients) - the report says flat top or collapse.
# Usage: bench/goodput.sh [goodput options, e.g. --slos-ms 10,20,30,50,75,100 --load-factors
#        0.5,0.75,1,1.25,1.5,2 --duration-s 30 --arrivals gamma --cv2 4]
# Results: bench/results/goodput-<UTC timestamp>/ (goodput.json, index.html, PNG plots, gateway log).
# Takes ~2 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" goodput --gateway-jar "$GATEWAY_JAR" "$@"
