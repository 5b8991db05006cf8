#!/usr/bin/env bash
# Model selection (Clipper NSDI'17 Fig. 8 and a Fig. 10 analogue): runs bench/selection-fig8.sh
# (Fig8Benchmark, writing bench/results/fig8.* and fig10.*), then puts its CSV, PNG and JSON into a
# report of the same format as the other scenarios.
# Usage: bench/selection.sh [Fig8Benchmark options, e.g. --queries 20000 --seeds 10]
# Results: bench/results/selection-<UTC timestamp>/ (index.html, fig8.{csv,png,json}, fig10.*).
set -euo pipefail
cd "$(dirname "$0")/.."
bench/selection-fig8.sh "$@"
source bench/build-if-needed.sh
java -jar "$LOADGEN_JAR" selection-report --from bench/results --out bench/results
