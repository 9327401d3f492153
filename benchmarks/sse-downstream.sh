# Sourced by the SSE benchmark's shell tools (profile-sse.sh; the side-by-side script of the issue 24 experiments,
# now only in git: git show 68043dd:benchmarks/results/2026-12-05-0650-side-by-side.sh):
# starts a redis-server on $RP (its log in $out/redis.log) and nginx on $NP serving the streams run-sse.sh wrote to
# $work/sse as text/event-stream (unbuffered, as an LLM upstream streams); sets RPID, NGPID and nd (nginx's dir).
# The caller stops them: kill $NGPID $RPID; rm -rf $nd
body='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Write a short poem about rate limits."}],"max_tokens":2048,"temperature":0.7,"stream":true}'
redis-server --port $RP --save '' --appendonly no --daemonize no >"$out/redis.log" 2>&1 & RPID=$!
nd=$(mktemp -d); mkdir -p $nd/logs
stream="types { } default_type text/event-stream; error_page 405 =200 \$uri; sub_filter_types text/event-stream; sub_filter '@@never@@' '';"
cat > $nd/nginx.conf <<NG
daemon off; worker_processes 1; error_log $nd/logs/error.log warn; pid $nd/nginx.pid;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 127.0.0.1:$NP;
    location = /ready { default_type text/plain; return 200 "ok\n"; }
    location /sse/ { root $work/sse; $stream } } }
NG
nginx -p $nd -c $nd/nginx.conf & NGPID=$!
