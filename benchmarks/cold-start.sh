#!/usr/bin/env bash
# The first seconds of a fresh gateway-app: does the limiter make them slower? Starts the packaged jar with its
# defaults (embedded Redis) plus one route without a limiter (`/plain/**`, the same in-app backend as the demo),
# waits until /actuator/health/readiness answers, then at once 64 keep-alive clients (wrk, 2 threads) for 8 s on
# one route: `plain` (no limiter), `limited` (the same RequestRateLimiter with a limit no client reaches: every
# request decided and admitted) or `demo` (the demo's, 5 in 10 s per client IP, so nearly every answer is a 429).
# A fresh JVM for every run, the routes alternated.
# usage: benchmarks/cold-start.sh [rounds, default 2]   (after `mvn -q -B -ntp install -DskipTests`)
# It prints a Markdown table; the current page, benchmarks/results/cold-start.md, is updated by hand from it.
set -uo pipefail
rounds=${1:-2}
root="$(cd "$(dirname "$0")/.." && pwd)"
jar=$(ls "$root"/gateway-app/target/gateway-app-*.jar | grep -v -e original -e -tests | head -1)
work=$(mktemp -d)
cat >"$work/routes.yml" <<'EOF'
spring.cloud.gateway.server.webflux.routes:
  - id: demo
    uri: forward:/demo-backend
    predicates: [ "Path=/demo/{*rest}" ]
    filters:
      - name: RequestRateLimiter
        args:
          rate-limiter: "#{@windowRateLimiter}"
          key-resolver: "#{@clientIpKeyResolver}"
          window-rate-limiter.algorithm: sliding-log
          window-rate-limiter.limit: 5
          window-rate-limiter.window: 10s
      - SetPath=/demo-backend{rest}
  - id: limited
    uri: forward:/demo-backend
    predicates: [ "Path=/limited/{*rest}" ]
    filters:
      - name: RequestRateLimiter
        args:
          rate-limiter: "#{@windowRateLimiter}"
          key-resolver: "#{@clientIpKeyResolver}"
          window-rate-limiter.limit: 100000000
          window-rate-limiter.window: 10s
      - SetPath=/demo-backend{rest}
  - id: plain
    uri: forward:/demo-backend
    predicates: [ "Path=/plain/{*rest}" ]
    filters: [ "SetPath=/demo-backend{rest}" ]
EOF
echo "| round | route | ready after s | req/s | p50 | p99 | max | non-2xx |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
  for route in plain limited demo; do
    port=$((18000 + RANDOM % 1000))
    java -jar "$jar" --server.port=$port --spring.config.additional-location=file:$work/routes.yml \
      >"$work/gateway-$route-$round.log" 2>&1 & pid=$!
    start=$(date +%s.%N)
    for _ in $(seq 1 600); do
      curl -sf -o /dev/null http://127.0.0.1:$port/actuator/health/readiness && break; sleep 0.05
    done
    ready=$(echo "$(date +%s.%N) - $start" | bc)
    wrk -t2 -c64 -d8s --latency http://127.0.0.1:$port/$route/hello >"$work/wrk.txt"
    rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
    p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.txt"); p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")
    max=$(awk '/Latency/ {print $4}' "$work/wrk.txt"); non2xx=$(awk '/Non-2xx/ {print $5}' "$work/wrk.txt")
    printf '| %s | %s | %.1f | %s | %s | %s | %s | %s |\n' "$round" "$route" "$ready" "$rps" "$p50" "$p99" "$max" "${non2xx:-0}"
    kill $pid; wait $pid 2>/dev/null
  done
done
rm -rf "$work"
