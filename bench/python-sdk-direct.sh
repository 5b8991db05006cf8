#!/usr/bin/env bash
# Direct gRPC to a no-op Python SDK container, batches of 1, 8 and 32 inputs of 150,528 bytes:
# this checkout's SDK beside the SDK of another revision (default: the commit before the SDK's
# large-input work), measured in one run with interleaved rounds.
# Usage: bench/python-sdk-direct.sh [BASE_REVISION] [extra options of bench/python-sdk-direct.py]
# Results: bench/results/python-sdk-direct.json, and a table on standard output. The base revision's SDK
# generates its stubs with grpc_tools at first import (Debian: python3-grpc-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-d3c56d9}
shift || true
dir=$(mktemp -d)
trap 'git worktree remove --force "$dir/base" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
git worktree add --detach "$dir/base" "$base" >/dev/null
exec_status=0
/usr/bin/python3 bench/python-sdk-direct.py --baseline "$dir/base" "$@" || exec_status=$?
exit $exec_status
