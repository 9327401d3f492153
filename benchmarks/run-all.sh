#!/usr/bin/env bash
# The benchmarks of the rate limiter, in one run on this machine: builds what they need, starts its
# own redis-server on a free loopback port, runs the parts one after another and prints a summary
# (also written to benchmarks/target/reports/<date>.md, outside the tree). Never part of `mvn verify`.
# Each part's current figures are one page, benchmarks/results/<part>.md, updated by hand from that report
# (its table pasted, a history row where a figure changed): see benchmarks/results/README.md.
#
#   benchmarks/run-all.sh                 decision, memory, http (about 35 minutes on 2 cores)
#   benchmarks/run-all.sh decision        1. decisions/s, library alone vs redis-benchmark
#   benchmarks/run-all.sh http            2. HTTP through gateway-app (wrk, issue 47's method: about 30 minutes)
#   benchmarks/run-all.sh memory          3. Redis memory per client
#   benchmarks/run-all.sh plans           4. decisions/s, the same limits inline, from a plan, assigned
#   benchmarks/run-all.sh scopes          5. decisions/s, the same limits the route's own and in a scope
#   benchmarks/run-all.sh hot             6. decisions/s of one client key vs 10,000, library and redis-benchmark
#   benchmarks/run-all.sh profile         7. CPU per request by process and by component (async-profiler in
#                                            gateway-app under wrk), flame graphs beside the report (profiles/)
#   benchmarks/run-all.sh leases          8. hot-client leases (issue 46): two gateway-apps on one Redis, one key
#                                            vs 10,000, scripts per request, exact windows and bucket, a cold client on
#                                            a Redis Cluster (about 14 minutes)
#   BENCH_REF=HEAD benchmarks/run-all.sh  measure a commit (a clean export of it, built apart) instead
#                                         of the working tree, e.g. while others are editing it
#   BENCH_SKIP_BUILD=1 benchmarks/run-all.sh ...   use the jars already built
#
# Settings (environment, defaults in brackets): BENCH_KEYS [10000] clients, BENCH_LIMIT [1000] limit per
# minute of the all-allowed cases, BENCH_DECISION_SECONDS [4], BENCH_DECISION_WARMUP_SECONDS [2], BENCH_DECISION_ROUNDS [2],
# BENCH_DECISION_IN_FLIGHT [256], BENCH_DECISION_REDIS_BENCHMARK_SECONDS [3], BENCH_HTTP_SECONDS [30],
# BENCH_HTTP_WARMUP_SECONDS [120, over all cases], BENCH_HTTP_PRELOAD_SECONDS [3], BENCH_HTTP_ROUNDS [4], BENCH_HTTP_CASES
# [none,fixed-window,fixed-window-aa,sliding-window-counter,sliding-log,sliding-log-sorted-set,token-bucket,built-in,
# flood-fixed-window,flood-sliding-window-counter,flood-built-in], BENCH_HTTP_THREADS [2], BENCH_HTTP_CONNECTIONS [64; part 2: 32],
# BENCH_GATEWAY_JVM_OPTIONS [-Xms512m -Xmx512m], BENCH_MEMORY_CLIENTS [1220], BENCH_MEMORY_HEAVY_CLIENTS [4],
# BENCH_PROFILE_SECONDS [15], BENCH_PROFILE_WARMUP_SECONDS [10],
# BENCH_PROFILE_INTERVAL_MILLIS [5], BENCH_LEASE_WARMUP_SECONDS [120], BENCH_LEASE_ROUNDS [3], BENCH_LEASE_SECONDS [20],
# BENCH_LEASE_EXACT_SECONDS [65], BENCH_LEASE_BOUND_SECONDS [30], BENCH_LEASE_CONNECTIONS [16 per instance],
# BENCH_LEASE_CASES [spread,hot,hot-lease,hot-lease-token-bucket,exact,exact-no-lease,token-bucket-bound,
# token-bucket-bound-no-lease,cluster-cold],
# BENCH_LEASE_EXACT_START_MILLIS [1000], BENCH_LEASE_COLD_SECONDS [30], BENCH_LEASE_COLD_ROUNDS [2],
# BENCH_LEASE_COLD_WARMUP_SECONDS [40],
# BENCH_REDIS_PORT (use a running Redis instead of starting one; it is flushed!).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

missing=()
for tool in redis-server redis-benchmark wrk nginx; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
	echo "Installing Debian's redis-server, redis-tools, wrk and nginx (missing: ${missing[*]})" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq redis-server redis-tools wrk nginx >/dev/null
fi

# The code to measure: the working tree, or a clean export of BENCH_REF with this benchmarks/ in it
src="$root"
code=""
if [[ -n "${BENCH_REF:-}" ]]; then
	sha="$(git rev-parse --short "$BENCH_REF")"
	src="$root/benchmarks/target/ref-$sha"
	code="$sha (clean export of $BENCH_REF)"
	if [[ "${BENCH_SKIP_BUILD:-}" != 1 ]]; then
		rm -rf "$src" && mkdir -p "$src"
		git archive "$sha" | tar -x -C "$src"
		rm -rf "$src/benchmarks"
		tar --exclude=target -c benchmarks | tar -x -C "$src"
		grep -q '<module>benchmarks</module>' "$src/pom.xml" \
			|| sed -i 's#</modules>#    <module>benchmarks</module>\n    </modules>#' "$src/pom.xml"
	fi
fi

if [[ "${BENCH_SKIP_BUILD:-}" != 1 ]]; then
	echo "Building gateway-filter, gateway-app and benchmarks in $src (tests skipped)..." >&2
	build=(-q -B -ntp -Dstyle.color=never package -Dmaven.test.skip=true -pl gateway-filter,gateway-app,benchmarks -am)
	(cd "$src" && { mvn -o "${build[@]}" || mvn "${build[@]}"; })
fi

exec java -Dbench.root="$root" -Dbench.command="benchmarks/run-all.sh $*" -Dbench.code="$code" \
	-Dbench.gateway-jar="$(ls "$src"/gateway-app/target/gateway-app-*.jar | grep -v -- '-tests\.jar$' | head -1)" \
	-jar "$src/benchmarks/target/benchmarks.jar" "$@"
