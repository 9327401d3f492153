#!/usr/bin/env bash
# Issue 24: an LLM route's SSE stream through gateway-app with and without metering, in one run (SseBenchmark):
# `plain` (no limiter), `limited` (WindowRateLimit with the metered route's request limit, no llm: a decision only)
# and `metered` (WindowRateLimit, llm: openai) to one nginx serving static OpenAI chat completion streams of 20, 200
# and 2,000 events; req/s, p50/p99 and limited / plain (the decision), metered / limited (the LLM path: body read
# and rewritten, meter, settle: the target, >= 0.9) and metered / plain per length, each the median of many short
# cycles of the three routes back to back, then the gateway's live heap per open stream (plain and metered), short
# and long. Report: benchmarks/target/reports/<date>-sse.md; the current page, benchmarks/results/sse.md, is updated
# by hand from it (see benchmarks/results/README.md). About 15 minutes at the defaults.
#
# Settings: BENCH_SSE_WARMUP_SECONDS [20] every case's warm-up, first all, then each length's before its cycles;
# BENCH_SSE_CYCLES [24] and BENCH_SSE_CYCLE_SECONDS [2] the cycles per length and each route's run in one;
# BENCH_HTTP_THREADS [2], BENCH_HTTP_CONNECTIONS [64], BENCH_KEYS [10000], BENCH_GATEWAY_JVM_OPTIONS
# [-Xms512m -Xmx512m], BENCH_SKIP_BUILD=1 as run-all.sh's; BENCH_SSE_EVENTS [20,200,2000] the stream lengths
# measured, BENCH_SSE_MEMORY_EVENTS [20,2000] those of the memory part (0: none), BENCH_SSE_STREAMS [200] streams
# open at once, BENCH_SSE_TAIL_RATE [64] bytes/s of a slow stream's tail, BENCH_SSE_INCLUDE_USAGE [false] whether
# the client asks for stream_options.include_usage (false: the gateway adds it and strips the usage chunk).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for tool in redis-server wrk nginx; do
	command -v "$tool" >/dev/null 2>&1 || { echo "needs $tool (apt-get install redis-server wrk nginx)" >&2; exit 1; }
done
if [[ "${BENCH_SKIP_BUILD:-}" != 1 ]]; then
	echo "Building gateway-app and benchmarks (tests skipped)..." >&2
	build=(-q -B -ntp -Dstyle.color=never package -Dmaven.test.skip=true -pl gateway-app,benchmarks -am)
	mvn -o "${build[@]}" || mvn "${build[@]}"
fi
# the report names the settings the run was given
settings="$(env | grep '^BENCH_' | sort | tr '\n' ' ' || true)"
exec java -Dbench.root="$root" -Dbench.command="${settings}benchmarks/run-sse.sh" -jar "$root/benchmarks/target/benchmarks.jar" sse
