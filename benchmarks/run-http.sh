#!/usr/bin/env bash
# Only part 2, HTTP through gateway-app; see run-all.sh for the settings.
exec "$(dirname "$0")/run-all.sh" http "$@"
