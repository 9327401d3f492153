#!/usr/bin/env bash
# CPU per request of gateway-app's SSE routes (plain, limited, metered: see run-sse.sh), phase by phase, each
# optionally under async-profiler attached for that phase alone (issue 24). Needs redis-server, nginx, wrk, jcmd,
# and a run of run-sse.sh before (its jars, and the streams and routes it wrote to benchmarks/target/bench-work).
# Each phase: wrk (2 threads, 64 connections, 10,000 clients, the benchmark's request body) on one route and
# stream length; the gateway's and Redis's CPU time from /proc before and after, divided by the requests.
# usage: benchmarks/profile-sse.sh OUTDIR "PHASES" [agent-lib]
# PHASES: "route:events:seconds ...", e.g. "metered:20:20! limited:20:20! metered:20:30 limited:20:30";
# phases whose seconds end in ! warm up: neither reported nor profiled. With agent-lib (libasyncProfiler.so),
# each reported phase writes OUTDIR/<route>-<events>.collapsed (event cpu every 1 ms, or PROFILE_EVENT: itimer sees
# only the kernel tick in this VM, a quarter of the CPU) and .html.
# Each reported phase also lists the Redis commands run more than once per 100 requests (INFO commandstats), and
# Redis's reads and writes per request (INFO stats). Current figures and the profiles they cite:
# benchmarks/results/profile-sse.md, updated by hand from OUTDIR/phases.txt and the profiles.
set -uo pipefail
out=$1; phases=$2; agent=${3:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$root/benchmarks/target/bench-work
jar=$(ls "$root"/gateway-app/target/gateway-app-*.jar | grep -v -e original -e -tests | head -1)
[[ -d $work/sse/sse && -f $work/gateway-sse-bench.yml && -f $work/sse.lua ]] || { echo "run benchmarks/run-sse.sh first" >&2; exit 1; }
mkdir -p "$out"; out=$(cd "$out" && pwd)
J=$(command -v java)
RP=$((20000 + RANDOM % 10000)); NP=$((RP+1)); GP=$((RP+2))
. "$root/benchmarks/sse-downstream.sh"
$J -Xms512m -Xmx512m ${JOPTS:-} -jar $jar --server.port=$GP --spring.data.redis.host=127.0.0.1 --spring.data.redis.port=$RP \
  --spring.config.additional-location=file:$work/gateway-sse-bench.yml --bench.downstream=http://127.0.0.1:$NP \
  --window-rate-limiter.failure-log-interval=500ms >"$out/gateway.log" 2>&1 & GPID=$!
for i in $(seq 1 240); do curl -sf -o /dev/null http://127.0.0.1:$GP/plain/ready && break; sleep 0.5; done
tick=$(getconf CLK_TCK)
cpu() { awk -v t=$tick '{print ($14+$15)/t}' /proc/$1/stat; }
for ph in $phases; do
  IFS=: read -r route events s <<<"$ph"; quiet=0; [[ $s == *! ]] && { quiet=1; s=${s%!}; }
  name=$route-$events
  [[ $quiet == 0 && -n $agent ]] && jcmd $GPID JVMTI.agent_load "$agent" "\"start,event=${PROFILE_EVENT:-cpu},interval=1ms\"" >/dev/null
  redis-cli -p $RP CONFIG RESETSTAT >/dev/null
  g0=$(cpu $GPID); r0=$(cpu $RPID)
  res=$(wrk -t 2 -c 64 -d ${s}s --timeout 10s -s "$work/sse.lua" http://127.0.0.1:$GP/$route/sse/$events -- 10000 client- "$body" | grep WRK_RESULT)
  g1=$(cpu $GPID); r1=$(cpu $RPID)
  if [[ $quiet == 0 && -n $agent ]]; then
    jcmd $GPID JVMTI.agent_load "$agent" "\"dump,file=$out/$name.collapsed,collapsed\"" >/dev/null
    jcmd $GPID JVMTI.agent_load "$agent" "\"stop,file=$out/$name.html,flamegraph\"" >/dev/null
  fi
  n=$(echo "$res" | sed 's/.*requests=\([0-9]*\).*/\1/'); p50=$(echo "$res" | sed 's/.*p50_us=\([0-9]*\).*/\1/'); err=$(echo "$res" | sed 's/.*status_errors=\([0-9]*\).*/\1/')
  line=$(awk -v c=$name -v n=$n -v s=$s -v g=$(echo "$g1-$g0"|bc) -v r=$(echo "$r1-$r0"|bc) -v p=$p50 -v e=$err \
    'BEGIN{printf "%-12s %6.0f req/s  gateway %7.1f us CPU/req  redis %5.1f us/req  p50 %6.1f ms  errors %s", c, n/s, g*1e6/n, r*1e6/n, p/1000, e}')
  [[ $quiet == 0 ]] && echo "$line" | tee -a $out/phases.txt || echo "(warm) $line"
  # Redis's commands per request and their own time per call (INFO commandstats; the rest of its CPU is I/O)
  [[ $quiet == 0 ]] && redis-cli -p $RP INFO commandstats | tr -d '\r' | grep '^cmdstat_' \
    | awk -F'[:=,]' -v n=$n '$3 > n / 100 {printf "    %-22s %6.2f per request  %6.2f us per call\n", $1, $3 / n, $7}' \
    | tee -a $out/phases.txt
  # how many commands share each of Redis's reads and writes (fewer reads per request: more per read)
  [[ $quiet == 0 ]] && redis-cli -p $RP INFO stats | tr -d '\r' | grep -E '^total_(reads|writes)_processed' \
    | awk -F: -v n=$n '{printf "    %-22s %6.2f per request\n", $1, $2 / n}' | tee -a $out/phases.txt
done
kill $GPID; wait $GPID 2>/dev/null; kill $NGPID $RPID; wait 2>/dev/null; rm -rf $nd
