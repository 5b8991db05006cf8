#!/usr/bin/env bash
# Large binary inputs (150,528-byte images by default) to a no-op Python SDK container: through
# the gateway as base64 JSON, as an application/octet-stream body and as OIP REST binary tensor
# data, beside straight-to-container gRPC (the floor), in one run with interleaved rounds; one
# client in a closed loop (p50, p99) and 8 clients (throughput, p50, p99), after 10 s of load per way
# for the JIT. About three minutes.
# Usage: bench/data-path.sh [extra options of bench/data-path.py, e.g. --rounds 3 --clients 4]
# Results: bench/results/data-path-<UTC timestamp>/ (data-path.json, the gateway's and the
# container's logs) and a table on standard output. Builds the gateway jar first when it is
# missing or older than the sources. Needs Debian's python3-grpcio and python3-numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/gateway-jar.sh
# run from a copy: another build in this tree may replace the jar while the benchmark runs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/servegate-data-path.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$GATEWAY_JAR" "$tmp/gateway.jar"
out=bench/results/data-path-$(date -u +%Y%m%dT%H%M%SZ)
/usr/bin/python3 bench/data-path.py --gateway-jar "$tmp/gateway.jar" --out "$out" "$@"
