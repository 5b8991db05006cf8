# Sourced by the benchmark scripts whose code lives in the gateway's test tree (it needs the real
# models and the test helpers): builds the test classes and their class path unless SKIP_BUILD=1,
# and defines run_gateway_test_main JVM_OPTION... -- MAIN_CLASS ARGS..., which runs from the gateway
# directory (the model files are found at ../containers/onnx/models) and writes to ../bench/results.
mkdir -p bench/results
cp_file=gateway/target/bench-test-classpath.txt
if [[ "${SKIP_BUILD:-0}" != 1 || ! -f "$cp_file" ]]; then
    echo "building the gateway's test classes..." >&2
    # One reactor invocation, so the project's own modules are on the class path as their freshly
    # compiled target/classes, not as whatever snapshot jars the local repository happens to hold.
    mvn -q -pl gateway -am test-compile dependency:build-classpath -DskipTests -Dmdep.includeScope=test \
        -Dmdep.outputFile="$PWD/$cp_file" >/dev/null
fi

run_gateway_test_main() {
    local jvm=()
    while [[ "$1" != "--" ]]; do jvm+=("$1"); shift; done
    shift
    local main=$1
    shift
    cd gateway
    # The class path goes in an argument file, not on the command line: ONNX Runtime (1.29.0, native
    # code) segfaults at session creation when the JVM's command line is longer than about 4 KiB.
    local args_file=target/bench-test-classpath.args
    printf -- '-cp target/test-classes:target/classes:%s\n' "$(cat "../$cp_file")" > "$args_file"
    exec java "${jvm[@]}" "@$args_file" "$main" --out ../bench/results "$@"
}
