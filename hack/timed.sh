#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs a command as one phase of make test: when PHASES names a file, the
# phase's name, its seconds and its exit status are appended to it, for
# hack/phases.sh to print at the end. Without PHASES it only runs the
# command. The command runs without PHASES: what it runs in turn is part
# of this phase.
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
start=$(date +%s%N)
# A phase's own phases (a make it runs) count in it, not beside it.
PHASES='' "$@"
status=$?
end=$(date +%s%N)
printf '%s\t%d.%01d\t%d\n' "$phase" $(((end - start) / 1000000000)) $((((end - start) / 100000000) % 10)) "$status" >>"$PHASES"
exit "$status"
