#!/usr/bin/env bash
# Issue 15's three-stage pipeline live: emulated stages (sim/pipelines/emulated/: β/α per model and
# per emulated hardware kind, and their cost table), deployed through the gateway's process manager.
#  1. The pipeline's minimum latency, live: one query at a time, every stage on its fastest kind, one
#     replica, batch size 1 (median of 300 queries); the SLO is 3x that.
#  2. bin/sim plan at that SLO, with the measured per-stage overhead as --overhead-ms (the median's;
#     PLAN_OVERHEAD=p99 takes the 99th percentile's), and --baselines.
#  3. Each plan (inferline, coarse-grained, batch-one) deployed in turn: replicas and kinds of the plan,
#     the clipper scheduler at the plan's max batch, the plan's deadline_micros per stage; open-loop
#     Poisson at the planned rate; end-to-end p99 and SLO attainment.
# Usage: flock /work/bench.lock bench/pipeline-plan.sh [--rate 50] [loadgen pipeline-plan options,
#        e.g. --stage-deadlines split for the control without the plan's stage deadlines]
# Results: bench/results/pipeline-plan-<UTC timestamp>/ (pipeline-plan.json, pipeline-plan.md, plan.json,
# the gateway's log and metrics scrape); the minimum-latency run has a folder of its own. About 8 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=50
if [[ "${1:-}" == --rate ]]; then rate=$2; shift 2; fi
source bench/build-if-needed.sh
[[ -f containers/emulated/target/emulated-container.jar ]] ||
  mvn -B -q -ntp -pl containers/emulated -am package -Dmaven.test.skip=true
P=sim/pipelines/emulated
profiles=$P/decode.json,$P/classify.json,$P/rank.json
common=(--gateway-jar "$GATEWAY_JAR" --pipeline $P/three-stage.json --profiles $profiles)
minimum=$(java -jar "$LOADGEN_JAR" pipeline-plan "${common[@]}" | tail -1)
echo "minimum latency: $minimum" >&2
slo=$(jq -r .slo_3x_ms <<<"$minimum")
field=overhead_per_stage_ms
[[ "${PLAN_OVERHEAD:-median}" == p99 ]] && field=overhead_per_stage_p99_ms
overhead=$(jq -r "if .$field > 0 then .$field else 0 end" <<<"$minimum")
plan=$(mktemp "${TMPDIR:-/tmp}/pipeline-plan.XXXXXX.json")
bin/sim plan $P/three-stage.json --profiles $profiles --costs $P/costs.json --slo-ms "$slo" \
    --overhead-ms "$overhead" --rate "$rate" --duration-s 20 --baselines --json "$plan" >&2
java -jar "$LOADGEN_JAR" pipeline-plan "${common[@]}" --plan "$plan" "$@" >/dev/null
rm -f "$plan"
