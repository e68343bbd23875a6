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
# The phase's output (stderr merged into stdout) is also kept in a log
# beside PHASES (FILE.tsv: FILE-logs/), whose path is recorded too:
# hack/phases.sh prints the last lines of a phase that failed, where CI's
# summary of a run shows them.
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
log_dir=${PHASES%.tsv}-logs
mkdir -p "$log_dir"
log=$log_dir/$(printf '%s' "$phase" | tr -c 'A-Za-z0-9.-' '_').log
: >"$log"
start=$(date +%s%N)
PHASES_PARENT=$phase "$@" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
end=$(date +%s%N)
# The builtin times prints the shell's own CPU times, then its children's
# (those waited for, with theirs); it runs in this shell, not in the
# subshell of a command substitution, whose children are none.
times_file=$(mktemp)
times >"$times_file"
cpu=$(awk 'NR == 2 { print cpu($1) + cpu($2) }
    function cpu(t,    m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return 60 * m + t }' "$times_file")
rm -f "$times_file"
printf '%s\t%d.%01d\t%d\t%s\t%.1f\t%s\n' "$phase" $(((end - start) / 1000000000)) $((((end - start) / 100000000) % 10)) "$status" "$parent" "$cpu" "$log" >>"$PHASES"
exit "$status"
