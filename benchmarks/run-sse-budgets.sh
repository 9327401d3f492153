#!/usr/bin/env bash
# Issue 45: limits per model and budgets in money on an LLM route's SSE stream, against a token limit, in one run
# (SseBudgetsBenchmark): four WindowRateLimit routes with llm: openai (tokens, tokens-aa: the A/A control,
# per-model, money) to one nginx serving a static OpenAI chat completion stream; the median of the cycles'
# per-model / tokens and money / tokens (target >= 0.97) beside the A/A control's, with the gateway's and Redis's
# CPU per call. Report: benchmarks/target/reports/<date>-sse-budgets.md; the current page,
# benchmarks/results/sse-budgets.md, is updated by hand from it. About 5 minutes at the defaults.
#
# Settings: BENCH_SSE_WARMUP_SECONDS [30] each route's warm-up (four routes: 2 minutes, the JIT's time here),
# BENCH_SSE_CYCLES [24] and BENCH_SSE_CYCLE_SECONDS [2], BENCH_SSE_BUDGET_EVENTS [200] the stream's events,
# BENCH_HTTP_THREADS, BENCH_HTTP_CONNECTIONS, BENCH_KEYS, BENCH_GATEWAY_JVM_OPTIONS, BENCH_SKIP_BUILD=1 as run-sse.sh's.
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
settings="$(env | grep '^BENCH_' | sort | tr '\n' ' ' || true)"
exec java -Dbench.root="$root" -Dbench.command="${settings}benchmarks/run-sse-budgets.sh" -jar "$root/benchmarks/target/benchmarks.jar" sse-budgets
