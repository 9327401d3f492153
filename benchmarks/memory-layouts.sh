#!/usr/bin/env bash
# What one key costs Redis in each value layout considered for the fixed window and the counter: the
# growth of used_memory when one script writes 2,440 keys (key tables 60% full, as with 5 million keys;
# the figure includes each key's share of both tables) into an emptied server of its own. Not a benchmark
# of the library: it writes the values directly, to separate what the name, the value and the expiry cost.
#
#   benchmarks/memory-layouts.sh
#
# It prints a Markdown table; the current page, benchmarks/results/memory-layouts.md, is updated by hand from it.
set -euo pipefail
dir="$(mktemp -d)"
sock="$dir/redis.sock"
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$dir" --daemonize yes \
	--pidfile "$dir/redis.pid" >/dev/null
trap 'kill "$(cat "$dir/redis.pid")"; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -s "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
r() { redis-cli -s "$sock" "$@"; }
used() { r info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
r debug set-active-expire 0 >/dev/null

n=2440
# layout NAME KEY-FORMAT LUA-VALUE-EXPRESSION [PX]
layout() {
	local name="$1" key="$2" value="$3" expiry="${4:-}"
	r flushall >/dev/null
	sleep 0.3
	local before
	before="$(used)"
	local set="redis.call('SET', string.format('$key', i), $value)"
	if [[ -n "$expiry" ]]; then
		set="redis.call('SET', string.format('$key', i), $value, 'PX', 600000)"
	fi
	r eval "for i = 1, $n do $set end" 0 >/dev/null
	sleep 1 # lets Redis finish rehashing a table that just grew
	local after encoding
	after="$(used)"
	local first shown
	first="$(printf "$key" 1)"
	encoding="$(r object encoding "$first")"
	if [[ "$(r --raw get "$first" | tr -d '\n' | tr -d '[:print:]' | wc -c)" != 0 ]]; then
		shown="$(r strlen "$first") bytes of binary"
	else
		shown="\`$(r --raw get "$first")\`"
	fi
	[[ -n "$name" ]] && printf '| %s | %s | %s | %.1f |\n' "$name" "$shown" "$encoding" "$(echo "($after - $before) / $n" | bc -l)"
	return 0
}

echo "Redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*malloc=\([^ ]*\).*/\1, \2/'), $n keys written by one script, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo '| layout | value | encoding | bytes per key |'
echo '|---|---|---|---:|'
layout '' 'wrl:{%012d}:orders:x' "'x'" px # warms up: the first script run costs memory of its own
layout 'fixed window before: `index:count:window`, key `...:fw`' 'wrl:{%012d}:orders:fw' "'29937520:50:60000'" px
layout 'counter before: `index:current:previous:window`, key `...:swc`' 'wrl:{%012d}:orders:swc' "'29937520:50:100:60000'" px
layout 'fixed window before this version: window end and count, one integer, key `...:f`' 'wrl:{%012d}:orders:f' "'60561660000502'" px
layout 'counter now: one integer, key `...:c`' 'wrl:{%012d}:orders:c' "'100936060501001143'" px
layout 'fixed window now: window index, length and count, one integer, key `...:fl`' 'wrl:{%012d}:orders:fl' "'1009360650142'" px
layout 'the same integer under the old suffix `...:fw` (28 characters)' 'wrl:{%012d}:orders:fw' "'60561660000502'" px
layout 'struct.pack of three 32-bit numbers (12 bytes)' 'wrl:{%012d}:orders:c' "struct.pack('>I4I4I4', 1009360, 50, 100)" px
layout 'cmsgpack of the four fields' 'wrl:{%012d}:orders:c' "cmsgpack.pack({29937520, 50, 100, 60000})" px
layout 'a shared small integer (0 to 9999): the count alone' 'wrl:{%012d}:orders:f' "'50'" px
layout 'the integer without an expiry' 'wrl:{%012d}:orders:f' "'60561660000502'"
layout 'a shared small integer under a 14-character key' '{%012d}' "'50'" px
