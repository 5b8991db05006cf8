# Sourced by the benchmark scripts whose mains live in the gateway-benchmarks module (they need the
# real models and the gateway's test helpers): builds the module and its class path unless
# SKIP_BUILD=1, and defines run_gateway_bench_main JVM_OPTION... -- MAIN_CLASS ARGS..., which runs
# from the gateway directory (the model files are found at ../containers/onnx/models) and writes to
# ../bench/results.
mkdir -p bench/results
cp_file=gateway-benchmarks/target/bench-classpath.txt
if [[ "${SKIP_BUILD:-0}" != 1 || ! -f "$cp_file" ]]; then
    echo "building the gateway benchmarks..." >&2
    # One reactor invocation, so the project's own modules are on the class path as their freshly
    # compiled target/classes (and the gateway's target/test-classes), not as whatever snapshot jars
    # the local repository happens to hold.
    mvn -q -pl gateway-benchmarks -am test-compile dependency:build-classpath -DskipTests \
        -Dmdep.includeScope=runtime -Dmdep.outputFile="$PWD/$cp_file" >/dev/null
fi

run_gateway_bench_main() {
    local jvm=()
    while [[ "$1" != "--" ]]; do jvm+=("$1"); shift; done
    shift
    local main=$1
    shift
    cd gateway
    # The class path goes in an argument file, not on the command line: ONNX Runtime (1.29.0, native
    # code) segfaults at session creation when the JVM's command line is longer than about 4 KiB.
    local args_file=../gateway-benchmarks/target/bench-classpath.args
    printf -- '-cp ../gateway-benchmarks/target/classes:%s\n' "$(cat "../$cp_file")" > "$args_file"
    exec java "${jvm[@]}" "@$args_file" "$main" --out ../bench/results "$@"
}
