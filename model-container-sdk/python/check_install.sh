#!/usr/bin/env bash
# Installs the servegate wheel into a fresh virtualenv in a temporary directory, away from any
# checkout, serves a model from it and predicts over gRPC with the installed package's own stubs.
# Prints the Python, grpcio, protobuf (and its implementation) and numpy versions it ran on.
#
#   model-container-sdk/python/check_install.sh [WHEEL] [PYTHON]
#
# WHEEL: a built wheel (default: build one from this checkout, which needs a protoc >= 3.20).
# PYTHON: the interpreter (default /usr/bin/python3, else python3). The virtualenv sees that
# interpreter's site packages (grpcio, protobuf, numpy), as no package index may be reachable; a
# Python without the venv module gets the wheel unpacked onto PYTHONPATH instead.
# PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python checks protobuf's pure-Python runtime.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${2:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3 )}
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

wheel=${1:-}
if [ -z "$wheel" ]; then
  "$python" -m pip wheel --quiet --no-build-isolation --no-deps -w "$work/dist" "$here" >&2
  rm -rf "$here/build" "$here/servegate.egg-info"  # setuptools' work files in the source tree
  wheel=$(ls "$work"/dist/servegate-*.whl)
fi
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")

cd "$work"   # nothing of a checkout on the path from here on
if "$python" -m venv --system-site-packages "$work/venv" >/dev/null 2>&1 && [ -x "$work/venv/bin/pip" ]; then
  "$work/venv/bin/pip" install --quiet --no-index --no-deps "$wheel"
  py="$work/venv/bin/python"
  how="pip install into a virtualenv"
else
  "$python" -m zipfile -e "$wheel" "$work/site"
  export PYTHONPATH="$work/site"
  py=$python
  how="wheel unpacked onto PYTHONPATH (no venv module)"
fi

cat > model.py <<'EOF'
import numpy as np
import servegate

servegate.serve(lambda batch: np.asarray(batch).sum(axis=1), name="sum", input_type="floats",
                output_type="floats", input_length=4, max_batch_size=4, port=0, host="127.0.0.1")
EOF
cat > client.py <<'EOF'
import sys

import google.protobuf
import grpc
import numpy as np
import servegate
from google.protobuf.internal import api_implementation
from servegate.oip import pb

channel = grpc.insecure_channel("127.0.0.1:" + sys.argv[1])
stub = servegate.GRPCInferenceServiceStub(channel)
request = pb.ModelInferRequest(model_name="sum")
request.inputs.add(name="input", datatype="FP32", shape=[2, 4])
request.raw_input_contents.append(np.arange(8, dtype="<f4").tobytes())
response = stub.ModelInfer(request, timeout=30)
sums = np.frombuffer(response.raw_output_contents[0], "<f4").tolist()
assert sums == [6.0, 22.0], sums
meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="sum"), timeout=30)
assert meta.parameters["servegate_warmup_batch_sizes"].string_param == "1,2,3,4", meta
assert "/site" in servegate.__file__ or "/venv/" in servegate.__file__, servegate.__file__
print("check_install: python %s, grpcio %s, protobuf %s (%s), numpy %s; servegate %s from %s" % (
    sys.version.split()[0], grpc.__version__, google.protobuf.__version__, api_implementation.Type(),
    np.__version__, servegate.__version__, servegate.__file__))
EOF
"$py" model.py > ready.txt 2> server.log &
server=$!
for _ in $(seq 1 300); do
  grep -q "^READY port=" ready.txt 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat server.log >&2; echo "check_install: FAILED (the model did not start)" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/^READY port=//p' ready.txt)
[ -n "$port" ] || { cat server.log >&2; echo "check_install: FAILED (no READY line)" >&2; exit 1; }
"$py" client.py "$port"
kill -TERM "$server"
wait "$server" || { cat server.log >&2; echo "check_install: FAILED (the model did not exit cleanly)" >&2; exit 1; }
server=
echo "check_install: OK ($how; $(basename "$wheel"))"
