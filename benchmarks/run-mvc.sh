#!/usr/bin/env bash
# The Server MVC HTTP benchmark: gateway-app-mvc with no limiter, with WindowRateLimit, and with the gateway's
# own Bucket4j filter over Redis, and gateway-app (WebFlux) with no limiter and with WindowRateLimit beside it for
# the same ratio on the other server, in one run (MvcHttpBenchmark). Settings as run-all.sh's (BENCH_HTTP_SECONDS,
# BENCH_HTTP_ROUNDS, BENCH_KEYS ...); BENCH_MVC_VIRTUAL_THREADS=true runs the gateway on virtual threads (Java 21+).
# Report: benchmarks/target/reports/<date>-mvc.md; the current page, benchmarks/results/mvc.md, is updated by hand
# from it (see benchmarks/results/README.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for tool in redis-server wrk; do
	command -v "$tool" >/dev/null 2>&1 || { echo "needs $tool (apt-get install redis-server wrk)" >&2; exit 1; }
done
if [[ "${BENCH_SKIP_BUILD:-}" != 1 ]]; then
	echo "Building gateway-app-mvc, gateway-app and benchmarks (tests skipped)..." >&2
	build=(-q -B -ntp -Dstyle.color=never package -DskipTests -Dmaven.javadoc.skip=true -pl gateway-app-mvc,gateway-app,benchmarks -am)
	mvn -o "${build[@]}" || mvn "${build[@]}"
fi
# the gateway runs on the java that runs the benchmark: virtual threads need 21+ (JAVA_HOME or PATH), and on 17
# the setting would be ignored while the report still said "virtual threads"
if [[ "${BENCH_MVC_VIRTUAL_THREADS:-}" == true ]]; then
	feature="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
	if (( ${feature%%.*} < 21 )); then
		echo "BENCH_MVC_VIRTUAL_THREADS=true needs Java 21+; java here is $feature (e.g. PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:\$PATH)" >&2
		exit 1
	fi
fi
exec java -Dbench.root="$root" -jar "$root/benchmarks/target/benchmarks.jar" mvc
