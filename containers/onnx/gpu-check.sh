#!/usr/bin/env bash
# Checks the ONNX container's CUDA path. Run on a machine with an NVIDIA GPU and the CUDA 12 /
# cuDNN 9 libraries that onnxruntime_gpu needs (untested on the CPU-only dev machines).
#   1. builds with the onnxruntime_gpu artifact and runs the accuracy test with --device cuda
#      semantics (every model in models/models.json, first 2,000 test images);
#   2. starts the shaded container jar with --device cuda on one model and loads it for a few
#      seconds with the load generator.
# Usage: containers/onnx/gpu-check.sh [model-name, default fmnist-cnn]
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL="${1:-fmnist-cnn}"
GPU=(-Donnxruntime.artifact=onnxruntime_gpu)

echo "== 1. accuracy on CUDA"
mvn -q -pl containers/onnx -am install "${GPU[@]}" -Dservegate.onnx.device=cuda \
    -Dtest=OnnxContainerAccuracyTest -Dsurefire.failIfNoSpecifiedTests=false
grep -h '^ACCURACY' containers/onnx/target/surefire-reports/*-output.txt

echo "== 2. shaded jar with --device cuda, $MODEL"
mvn -q -pl loadgen -am package -DskipTests "${GPU[@]}"
LOG="$(mktemp)"
java -jar containers/onnx/target/onnx-container.jar --name "$MODEL" --host 127.0.0.1 --port 0 \
    --device cuda --model "containers/onnx/models/$MODEL.onnx" >"$LOG" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  grep -q '^READY port=' "$LOG" && break
  kill -0 "$PID" 2>/dev/null || { cat "$LOG"; exit 1; }
  sleep 1
done
PORT="$(sed -n 's/^READY port=//p' "$LOG")"
[ -n "$PORT" ] || { cat "$LOG"; exit 1; }
java -jar loadgen/target/loadgen.jar grpc-direct --target "127.0.0.1:$PORT" --model "$MODEL" \
    --batch-sizes 1,32,128 --duration-s 5 --warmup-s 3 --out containers/onnx/target/gpu-check
kill -TERM "$PID"
wait "$PID" || true
echo "GPU check passed"
