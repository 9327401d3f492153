#!/usr/bin/env bash
# CPU per request of gateway-app-mvc's cases (none, ours, ours-token-bucket, bucket4j), phase by phase, optionally under
# async-profiler from launch (issue 25). Needs redis-server, nginx, wrk and JDK 25 (virtual threads; VT=false
# for platform threads); JOPTS adds JVM options. Each phase: wrk (2 threads, 64 connections, 10,000 clients)
# on one case; the gateway's and Redis's CPU time from /proc before and after, divided by the requests.
# usage: benchmarks/profile-mvc.sh OUTDIR JAR "PHASES" [agent-opts] [extra gateway args...]
# PHASES: "case:seconds case:seconds ..."; phases whose seconds end in ! warm up and are not reported.
# agent-opts e.g. "start,event=itimer,loop=10s,file=OUTDIR/%t.collapsed,collapsed": one profile per 10 s
# (named by when it was written), so the warm-up's can be left out. Current figures and the profiles they cite:
# benchmarks/results/profile-mvc.md, updated by hand from OUTDIR/phases.txt and the profiles.
set -uo pipefail
out=$1; jar=$2; phases=$3; agent=${4:-}; shift 4 || shift $#
mkdir -p "$out"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
RP=$((20000 + RANDOM % 10000)); NP=$((RP+1)); GP=$((RP+2))
redis-server --port $RP --save '' --appendonly no --daemonize no >"$out/redis.log" 2>&1 & RPID=$!
nd=$(mktemp -d); mkdir -p $nd/logs
cat > $nd/nginx.conf <<NG
daemon off; worker_processes 1; error_log $nd/logs/error.log warn; pid $nd/nginx.pid;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 127.0.0.1:$NP; location / { default_type text/plain; return 200 "ok\n"; } } }
NG
nginx -p $nd -c $nd/nginx.conf & NGPID=$!
cat > $out/routes.yml <<YML
spring.threads.virtual.enabled: ${VT:-true}
gateway-app-mvc.bucket4j-route.uri: http://127.0.0.1:$NP
spring.cloud.gateway.server.webmvc.routes:
  - id: none
    uri: http://127.0.0.1:$NP
    predicates: [ "Path=/none/**" ]
  - id: ours
    uri: http://127.0.0.1:$NP
    predicates: [ "Path=/ours/**" ]
    filters:
      - name: WindowRateLimit
        args:
          key-resolver: headerKeyResolver
          algorithm: sliding-window-counter
          limit: 1000000
          window: 1m
  - id: ours-token-bucket
    uri: http://127.0.0.1:$NP
    predicates: [ "Path=/ours-token-bucket/**" ]
    filters:
      - name: WindowRateLimit
        args:
          key-resolver: headerKeyResolver
          algorithm: token-bucket
          limit: 1000000
          window: 1m
YML
ag=(); [[ -n "$agent" ]] && ag=("-agentpath:/tmp/ap/linux-x64/libasyncProfiler.so=$agent")
$J -Xms512m -Xmx512m ${JOPTS:-} "${ag[@]}" -jar $jar --server.port=$GP --spring.data.redis.host=127.0.0.1 --spring.data.redis.port=$RP \
  --spring.config.additional-location=file:$out/routes.yml --window-rate-limiter.failure-log-interval=500ms "$@" >"$out/gateway.log" 2>&1 & GPID=$!
for i in $(seq 1 240); do curl -sf -o /dev/null http://127.0.0.1:$GP/none/ready && break; sleep 0.5; done
tick=$(getconf CLK_TCK)
cpu() { awk -v t=$tick '{print ($14+$15)/t}' /proc/$1/stat; }
for ph in $phases; do
  c=${ph%%:*}; s=${ph#*:}; quiet=0; [[ $s == *! ]] && { quiet=1; s=${s%!}; }
  g0=$(cpu $GPID); r0=$(cpu $RPID); t0=$(date +%s.%N)
  res=$(wrk -t 2 -c 64 -d ${s}s --timeout 5s -s "$(cd "$(dirname "$0")" && pwd)/src/main/resources/io/windowlimiter/benchmarks/clients.lua" http://127.0.0.1:$GP/$c/x 10000 | grep WRK_RESULT)
  t1=$(date +%s.%N); g1=$(cpu $GPID); r1=$(cpu $RPID)
  n=$(echo "$res" | sed 's/.*requests=\([0-9]*\).*/\1/'); p50=$(echo "$res" | sed 's/.*p50_us=\([0-9]*\).*/\1/'); err=$(echo "$res" | sed 's/.*status_errors=\([0-9]*\).*/\1/')
  line=$(awk -v c=$c -v n=$n -v s=$s -v g=$(echo "$g1-$g0"|bc) -v r=$(echo "$r1-$r0"|bc) -v p=$p50 -v t0=$t0 -v t1=$t1 -v e=$err \
    'BEGIN{printf "%-9s %6.0f req/s  gateway %6.1f us CPU/req  redis %5.1f us/req  p50 %5.1f ms  errors %s  [%d..%d]", c, n/s, g*1e6/n, r*1e6/n, p/1000, e, t0, t1}')
  [[ $quiet == 0 ]] && echo "$line" | tee -a $out/phases.txt || echo "(warm) $line"
done
kill $GPID; wait $GPID 2>/dev/null; kill $NGPID $RPID; wait 2>/dev/null; rm -rf $nd
