#!/usr/bin/env bash
# Only part 2, HTTP through gateway-app; see run-all.sh for the settings. Current figures: benchmarks/results/http.md.
exec "$(dirname "$0")/run-all.sh" http "$@"
