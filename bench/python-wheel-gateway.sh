#!/usr/bin/env bash
# A Python model served from the SDK's wheel alone, predicted with through the gateway: builds the
# wheel, installs it into a fresh virtualenv in a temporary directory (the system's grpcio,
# protobuf and numpy visible to it; nothing of the checkout on its path), serves a small model from
# there, starts the gateway (in-memory registry, free ports), registers the model and an app with
# the admin API, and checks the answers of /{app}/predict and of OIP REST.
# Usage: bench/python-wheel-gateway.sh          (SKIP_BUILD=1 reuses the jars as they are)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/build-if-needed.sh
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work" "$bench_jars"; }
trap cleanup EXIT
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

/usr/bin/python3 -m pip wheel --quiet --no-build-isolation --no-deps -w "$work/dist" model-container-sdk/python
rm -rf model-container-sdk/python/build model-container-sdk/python/servegate.egg-info
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index --no-deps "$work"/dist/servegate-*.whl

cat > "$work/model.py" <<'EOF'
import servegate
# the index of the largest of four numbers, as text
servegate.serve(lambda batch: batch.argmax(axis=1), name="argmax", input_type="floats", input_length=4,
                max_batch_size=8, port=0, host="127.0.0.1")
EOF
(cd "$work" && exec venv/bin/python model.py > ready.txt 2> model.log) &
pids+=($!)
for _ in $(seq 1 300); do grep -q "^READY port=" "$work/ready.txt" 2>/dev/null && break; sleep 0.1; done
model_port=$(sed -n 's/^READY port=//p' "$work/ready.txt")
[[ -n "$model_port" ]] || { cat "$work/model.log" >&2; echo "python-wheel-gateway: the model did not start" >&2; exit 1; }
grep -q "$work/venv/lib/" <("$work/venv/bin/python" -c 'import servegate; print(servegate.__file__)')

http=$(free_port); admin=$(free_port)
java -jar "$GATEWAY_JAR" --server.port="$http" --servegate.admin.port="$admin" --servegate.oip.grpc-port=0 \
    > "$work/gateway.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$admin/admin/ping" >/dev/null && break; sleep 0.5; done
A="http://127.0.0.1:$admin/admin"; J='Content-Type: application/json'
curl -sf "$A/add_app" -H "$J" -d '{"name":"wheel","input_type":"floats","default_output":"-1","latency_slo_micros":2000000}' >/dev/null
curl -sf "$A/add_model" -H "$J" -d '{"model_name":"argmax","model_version":"1","input_type":"floats","batch_size":-1}' >/dev/null
curl -sf "$A/add_model_links" -H "$J" -d '{"app_name":"wheel","model_names":["argmax"]}' >/dev/null
curl -sf "$A/add_container" -H "$J" -d "{\"model_name\":\"argmax\",\"model_version\":\"1\",\"address\":\"127.0.0.1:$model_port\"}" >/dev/null

answer=
for _ in $(seq 1 60); do  # the gateway probes and profiles the replica before it sends it queries
  answer=$(curl -s "http://127.0.0.1:$http/wheel/predict" -H "$J" -d '{"input":[0.5, 3, 1, 2]}')
  [[ "$answer" == *'"default":false'* ]] && break
  sleep 0.5
done
echo "predict: $answer"
[[ "$answer" == *'"output":1'* && "$answer" == *'"default":false'* ]] ||
  { tail -20 "$work/gateway.log" >&2; echo "python-wheel-gateway: FAILED" >&2; exit 1; }
oip=$(curl -s "http://127.0.0.1:$http/v2/models/argmax/infer" -H "$J" \
  -d '{"inputs":[{"name":"input","datatype":"FP32","shape":[2,4],"data":[9,1,1,1, 1,1,1,9]}]}')
echo "OIP REST: $oip"
[[ "$oip" == *'"0"'*'"3"'* ]] || { echo "python-wheel-gateway: FAILED (OIP REST)" >&2; exit 1; }
echo "python-wheel-gateway: OK (a model served from the wheel in $work/venv, predicted through the gateway)"
