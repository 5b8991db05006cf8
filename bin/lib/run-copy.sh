# Sourced by bin/gateway and bin/loadgen: runs an executable jar from a copy of it, so that
# rebuilding the jar under a running process (a `mvn package` of any module that depends on it,
# `mvn clean`) does not pull classes from under it: a JVM whose jar is rewritten fails its later
# class loads (NoClassDefFoundError) while the classes it already loaded keep working.
#
# run_copy NAME JAR MODULE COPIES ARGS...: builds MODULE when JAR is missing (or always with
# SERVEGATE_BUILD=always), then runs `java $JAVA_OPTS -jar COPY ARGS...`. The copies live in COPIES,
# one per distinct build, named by its checksum; a copy no process has had open for a minute is
# removed at a later start (with psmisc's fuser; without it, old copies stay).
run_copy() {
  local name=$1 jar=$2 module=$3 copies=$4 root
  shift 4
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if [ ! -f "$jar" ] || [ "${SERVEGATE_BUILD:-}" = always ]; then
    echo "$name: building $jar" >&2
    (cd "$root" && mvn -B -q -ntp -DskipTests -pl "$module" -am package)
  fi
  mkdir -p "$copies"
  local copy tmp
  copy=$copies/$name-$(sha1sum "$jar" | cut -c1-12).jar
  if [ ! -f "$copy" ]; then
    # written beside, then renamed: a copy is never seen half-written, nor rewritten once in use
    tmp=$(mktemp "$copies/.copy.XXXXXX")
    cp "$jar" "$tmp" && mv -f "$tmp" "$copy"
  fi
  if command -v fuser >/dev/null; then
    # older than a minute: a process starting beside this one has its copy open by then
    find "$copies" -maxdepth 1 -name "$name-*.jar" ! -path "$copy" -mmin +1 | while read -r old; do
      fuser -s "$old" 2>/dev/null || rm -f "$old"
    done
  fi
  # shellcheck disable=SC2086  # JAVA_OPTS is a list of options
  exec java ${JAVA_OPTS:-} -jar "$copy" "$@"
}
