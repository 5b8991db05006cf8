#!/usr/bin/env bash
# Serving-overhead floor: closed-loop OIP gRPC load straight at the noop container (started in
# the load generator's JVM on a loopback port), batch sizes 1, 8 and 32.
# Usage: bench/noop-direct.sh [extra grpc-direct options, e.g. --duration-s 30 --clients 8]
# Results: bench/results/grpc-direct-<UTC timestamp>/grpc-direct.json, and a table on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -pl loadgen -am package -DskipTests
exec java -jar loadgen/target/loadgen.jar grpc-direct --start-noop --batch-sizes 1,8,32 \
    --out bench/results "$@"
