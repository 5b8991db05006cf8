#!/usr/bin/env bash
# JMH micro-benchmarks of the gateway's in-process cores (module benchmarks/): the prediction
# cache's hit and miss paths, the batching queue's enqueue and dispatch, and the selection
# policies' select / combine / observe plus the state codec.
#
# Usage: bench/jmh.sh [JMH options / benchmark regexps]
#   e.g. bench/jmh.sh SelectionBenchmark
#        bench/jmh.sh -wi 1 -i 2 PredictionCache    (an option given replaces its default)
#        bench/jmh.sh -h                             (JMH's own help)
# SKIP_BUILD=1 reuses benchmarks/target/benchmarks.jar as it is.
# Results: the table on stdout, and bench/results/jmh.json (JMH's JSON format).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    mvn -q -pl benchmarks -am package -DskipTests
fi
mkdir -p bench/results

# Defaults: -f 1 -wi 3 -i 5 -w 1s -r 1s -rf json -rff bench/results/jmh.json. JMH rejects an
# option given twice, so a default is passed only when the caller did not give that option.
defaults=(-f 1 -wi 3 -i 5 -w 1s -r 1s -rf json -rff bench/results/jmh.json)
args=()
for ((k = 0; k < ${#defaults[@]}; k += 2)); do
    opt=${defaults[k]}
    given=0
    for a in "$@"; do
        [[ "$a" == "$opt" ]] && given=1
    done
    [[ $given == 1 ]] || args+=("$opt" "${defaults[k + 1]}")
done
exec java -jar benchmarks/target/benchmarks.jar "${args[@]}" "$@"
