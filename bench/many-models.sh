#!/usr/bin/env bash
# Many models live (docs/many-models.md): 200 model versions (real ONNX files, the four
# Fashion-MNIST models copied under different names and versions into a temporary directory by
# bench/model-repository.sh; nothing is downloaded), Zipf popularity (s = 1), 2 onnx containers
# whose memory budget holds the 20 most popular, Poisson arrivals through the real gateway. Runs
# two placements, each behind a fresh gateway: lru (every version placed on one pool, loaded on
# demand and evicted least recently used first by the gateway's MultiModelScheduler) and static
# (the 20 most popular registered as ordinary replicas on both containers, the others answered with
# the default), and reports goodput, cold-start rate and p99 of each.
# Usage: bench/many-models.sh [many-models options, e.g. --rate 50 --duration-s 60 --count 100]
# Results: bench/results/many-models-<UTC timestamp>/ (many-models.json, index.html,
# many-models.png, the gateways' and containers' logs). Takes ~2 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
[[ -f containers/onnx/target/onnx-container.jar ]] ||
  mvn -B -q -ntp -pl containers/onnx -am package -Dmaven.test.skip=true
count=200
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ "${args[i]}" == --count ]] && count=${args[i + 1]}
  [[ "${args[i]}" == --count=* ]] && count=${args[i]#--count=}
done
repo=$(mktemp -d "${TMPDIR:-/tmp}/servegate-many-models.XXXXXX")
trap 'rm -rf "$bench_jars" "$repo"' EXIT
bench/model-repository.sh "$repo/models" "$count" >&2
# this benchmark's SLO unless one is given (loadgen's default, 20 ms, is the batching scenarios')
slo=(--slo-ms 100); [[ " $* " == *" --slo-ms"* ]] && slo=()
java -jar "$LOADGEN_JAR" many-models --gateway-jar "$GATEWAY_JAR" "${slo[@]}" --model-dir "$repo/models" "$@"
