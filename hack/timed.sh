#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs a command as one phase of make test: when PHASES names a file, the
# phase's name, its seconds, its exit status, the phase it ran within
# (empty for none) and the CPU seconds (user and system) of the processes
# it ran are appended to it, for hack/phases.sh to print at the end: a
# phase that used fewer cores than the machine has left some idle. Without
# PHASES it only runs the command. The phases of what the command runs in
# turn (a make that runs parts side by side) are recorded within this one.
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
# The builtin times prints the shell's own CPU times, then its children's
# (those waited for, with theirs); it runs in this shell, not in the
# subshell of a command substitution, whose children are none.
times_file=$(mktemp)
times >"$times_file"
cpu=$(awk 'NR == 2 { print cpu($1) + cpu($2) }
    function cpu(t,    m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return 60 * m + t }' "$times_file")
rm -f "$times_file"
printf '%s\t%d.%01d\t%d\t%s\t%.1f\n' "$phase" $(((end - start) / 1000000000)) $((((end - start) / 100000000) % 10)) "$status" "$parent" "$cpu" >>"$PHASES"
exit "$status"
