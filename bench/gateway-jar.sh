# Sourced by bench scripts, from the repository root: sets GATEWAY_JAR to the gateway's executable
# jar, (re)building it first when it is missing or older than any source or pom of the modules it
# is made of. SKIP_BUILD=1 skips the check.
GATEWAY_JAR=gateway/target/gateway-0.1.0-SNAPSHOT.jar
if [[ "${SKIP_BUILD:-0}" != 1 ]] && { [[ ! -f "$GATEWAY_JAR" ]] || [[ -n "$(find pom.xml src/proto core oip-client \
        gateway -path '*/target' -prune -o \( -name '*.java' -o -name 'pom.xml' -o -name '*.yml' -o -name '*.proto' \) \
        -newer "$GATEWAY_JAR" -print -quit)" ]]; }; then
    echo "building the gateway..." >&2
    mvn -q -o -pl gateway -am package -Dmaven.test.skip=true
fi
