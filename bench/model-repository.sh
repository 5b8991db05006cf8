#!/usr/bin/env bash
# Makes a model repository of COUNT model versions for many-model benchmarks, from the four
# Fashion-MNIST ONNX models in containers/onnx/models (nothing is downloaded): version v of
# fmnist-cnn, fmnist-mlp, fmnist-logreg and fmnist-tiny in turn, in Triton's layout
# DIR/<name>/<version>/model.onnx, so that model version i is <models[i mod 4]> version i/4 + 1.
# Serve it with: java -jar containers/onnx/target/container-onnx-*.jar --model-dir DIR --port 8001 \
#   --memory-budget-bytes 50000000
# Usage: bench/model-repository.sh DIR [COUNT, default 200]   (DIR must not exist yet)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/model-repository.sh DIR [COUNT]}
count=${2:-200}
if [[ -e "$dir" ]]; then
  echo "$dir exists; give a new directory" >&2
  exit 2
fi
if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
  echo "COUNT must be a positive integer, got '$count'" >&2
  exit 2
fi
models=(fmnist-cnn fmnist-mlp fmnist-logreg fmnist-tiny)
for ((i = 0; i < count; i++)); do
  name=${models[i % 4]}
  version=$((i / 4 + 1))
  mkdir -p "$dir/$name/$version"
  cp "containers/onnx/models/$name.onnx" "$dir/$name/$version/model.onnx"
done
echo "$count model versions in $dir ($(du -sb "$dir" | cut -f1) bytes)"
