# Sourced by the bench scripts, from the repository root: (re)builds the load generator and the
# gateway jars when one is missing or older than any source or pom of the modules they are made of.
# SKIP_BUILD=1 skips the check. Then copies both jars to a temporary directory (removed on exit)
# and sets LOADGEN_JAR and GATEWAY_JAR to the copies.
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    jars=(loadgen/target/loadgen.jar gateway/target/gateway-0.1.0-SNAPSHOT.jar)
    stale=0
    for jar in "${jars[@]}"; do
        if [[ ! -f "$jar" ]] || [[ -n "$(find pom.xml src/proto model-container-sdk oip-client core workload sim containers/noop containers/emulated \
                loadgen gateway -path '*/target' -prune -o \( -name '*.java' -o -name 'pom.xml' -o -name '*.yml' \
                -o -name '*.proto' \) -newer "$jar" -print -quit)" ]]; then
            stale=1
        fi
    done
    if [[ $stale == 1 ]]; then
        echo "building the load generator and the gateway..." >&2
        # -Dmaven.test.skip: test sources are not needed, and need not compile, for the jars
        mvn -q -pl loadgen,gateway -am package -Dmaven.test.skip=true
    fi
fi

# Run from copies: other builds in this tree may replace the jars while a benchmark is running,
# and a running JVM loads classes from its jar lazily.
bench_jars=$(mktemp -d "${TMPDIR:-/tmp}/servegate-bench.XXXXXX")
trap 'rm -rf "$bench_jars"' EXIT
cp loadgen/target/loadgen.jar gateway/target/gateway-0.1.0-SNAPSHOT.jar "$bench_jars/"
LOADGEN_JAR="$bench_jars/loadgen.jar"
GATEWAY_JAR="$bench_jars/gateway-0.1.0-SNAPSHOT.jar"
