#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs a command as one phase of make test: when PHASES names a file, the
# phase's name, its seconds, its exit status and the phase it ran within
# (empty for none) are appended to it, for hack/phases.sh to print at the
# end. Without PHASES it only runs the command. The phases of what the
# command runs in turn (a make that runs parts side by side) are recorded
# within this one.
#
# usage: hack/timed.sh PHASE COMMAND [ARG...]

set -o nounset

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PHASE COMMAND [ARG...]" >&2
    exit 2
fi
phase=$1
shift
if [[ -z "${PHASES:-}" ]]; then
    exec "$@"
fi
parent=${PHASES_PARENT:-}
start=$(date +%s%N)
PHASES_PARENT=$phase "$@"
status=$?
end=$(date +%s%N)
printf '%s\t%d.%01d\t%d\t%s\n' "$phase" $(((end - start) / 1000000000)) $((((end - start) / 100000000) % 10)) "$status" "$parent" >>"$PHASES"
exit "$status"
