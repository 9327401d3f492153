#!/usr/bin/env bash
# SSE benchmark helper (issue 24): two gateways side by side (jar A, jar B) on one Redis and one nginx; cycles of wrk runs of S seconds,
# A and B alternated (order flipped every other cycle), per route; prints per-cycle B/A per route and medians, and
# (since 2026-12-05 18:20) each run's gateway and Redis CPU per request from /proc (only the gateway under load runs then).
# usage: [JOPTS_A=..] [JOPTS_B=..] 2026-12-05-0650-side-by-side.sh A.jar B.jar CYCLES SECONDS "routes" EVENTS
# (JOPTS_A, JOPTS_B: JVM options of one gateway, e.g. a -D switch)
set -uo pipefail
A=$1; B=$2; cycles=$3; s=$4; routes=$5; events=${6:-20}
root="$(cd "$(dirname "$0")/../.." && pwd)"; work=$root/benchmarks/target/bench-work
RP=$((20000 + RANDOM % 10000)); NP=$((RP+1)); PA=$((RP+2)); PB=$((RP+3))
out=$(mktemp -d)
. "$root/benchmarks/sse-downstream.sh"
start() { java -Xms512m -Xmx512m ${3:-} -jar $1 --server.port=$2 --spring.data.redis.host=127.0.0.1 --spring.data.redis.port=$RP \
  --spring.config.additional-location=file:$work/gateway-sse-bench.yml --bench.downstream=http://127.0.0.1:$NP >$out/g$2.log 2>&1 & echo $!; }
GA=$(start $A $PA "${JOPTS_A:-}"); GB=$(start $B $PB "${JOPTS_B:-}")
for p in $PA $PB; do for i in $(seq 1 240); do curl -sf -o /dev/null http://127.0.0.1:$p/plain/ready && break; sleep 0.5; done; done
tick=$(getconf CLK_TCK); cpu() { awk -v t=$tick '{print ($14+$15)/t}' /proc/$1/stat; }
# requests, then the gateway's and Redis's CPU per request in us
runc() { local pid=$1; shift; local c0=$(cpu $pid); local r0=$(cpu $RPID); local n=$(run "$@"); local c1=$(cpu $pid); local r1=$(cpu $RPID); echo "$n $(echo "($c1-$c0)*1000000/$n" | bc -l) $(echo "($r1-$r0)*1000000/$n" | bc -l)"; }
run() { wrk -t 2 -c 64 -d ${2}s --timeout 10s -s "$work/sse.lua" http://127.0.0.1:$1 -- 10000 client- "$body" | grep WRK_RESULT | sed 's/.*requests=\([0-9]*\).*/\1/'; }
for r in $routes; do run $PA/$r/sse/$events 15 >/dev/null; run $PB/$r/sse/$events 15 >/dev/null; done
for r in $routes; do run $PA/$r/sse/$events 10 >/dev/null; run $PB/$r/sse/$events 10 >/dev/null; done
for c in $(seq 1 $cycles); do
  for r in $routes; do
    if (( c % 2 )); then a=$(runc $GA $PA/$r/sse/$events $s); b=$(runc $GB $PB/$r/sse/$events $s); else b=$(runc $GB $PB/$r/sse/$events $s); a=$(runc $GA $PA/$r/sse/$events $s); fi
    echo "$c $r $a $b" | awk '{printf "%s %s A %d B %d cpuA %.1f cpuB %.1f redisA %.1f redisB %.1f B/A %.3f\n", $1, $2, $3, $6, $4, $7, $5, $8, $6/$3}' | tee -a $out/cycles.txt
  done
done
for r in $routes; do
  grep " $r " $out/cycles.txt | awk '{print $NF}' | sort -n | awk -v r=$r '{a[NR]=$1} END{printf "%s median B/A %.3f  middle half %.3f-%.3f  (n=%d)\n", r, (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2, a[int(NR/4)+1], a[int(3*NR/4)], NR}'
done
kill $GA $GB; wait $GA $GB 2>/dev/null; kill $NGPID $RPID; wait 2>/dev/null; rm -rf $nd
echo "logs in $out"
