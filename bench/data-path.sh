#!/usr/bin/env bash
# Large binary inputs (150,528-byte images by default) to a no-op Python SDK container: through
# the gateway as base64 JSON, as an application/octet-stream body and as OIP REST binary tensor
# data, beside straight-to-container gRPC and the cost benchmark's floor server (the same HTTP and
# gRPC stack with nothing but one ModelInfer per request), in one run with interleaved rounds; one
# client in a closed loop (p50, p99) and 8 clients (throughput, p50, p99), after 10 s of load per way
# for the JIT. About three minutes.
# Usage: bench/data-path.sh [extra options of bench/data-path.py, e.g. --rounds 3 --clients 4]
# Results: bench/results/data-path-<UTC timestamp>/ (data-path.json, the gateway's and the
# container's logs) and a table on standard output. Builds the gateway and load generator jars first
# when one is missing or older than the sources. Needs Debian's python3-grpcio and python3-numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
out=bench/results/data-path-$(date -u +%Y%m%dT%H%M%SZ)
/usr/bin/python3 bench/data-path.py --gateway-jar "$GATEWAY_JAR" --floor-jar "$LOADGEN_JAR" --out "$out" "$@"
