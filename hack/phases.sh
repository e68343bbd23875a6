#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Prints the phases hack/timed.sh recorded in FILE, in the order they ran,
# with their share of the total: what make test prints at its end, so that
# a developer sees which phase grew. A phase that failed is marked. The
# phases recorded within another (parts run side by side) are printed
# under it, indented, and count in its time only. The cores column is the
# CPU seconds of a phase's processes over its seconds: on CI's 2 cores, a
# phase well under 2 left a core idle that another could have used.
# Before them, for each phase that failed and ran no phase that failed in
# turn, the last lines of its output (its log, hack/timed.sh's): side by
# side with others, its output went by long before the end.
#
# usage: hack/phases.sh FILE [WALL_SECONDS]

set -o errexit
set -o nounset
set -o pipefail

file=${1:?usage: $0 FILE [WALL_SECONDS]}
wall=${2:-}
[[ -s "$file" ]] || exit 0
# The phases that failed themselves, not only through one they ran.
awk -F'\t' '{ name[NR] = $1; status[NR] = $3; parent[NR] = $4; log_[NR] = $6
      if ($3 != 0 && $4 != "") failedChild[$4] = 1 }
    END { for (i = 1; i <= NR; i++) if (status[i] != 0 && !(name[i] in failedChild) && log_[i] != "") print name[i] "\t" log_[i] }' "$file" |
    while IFS=$'\t' read -r phase log; do
        [[ -s "$log" ]] || continue
        echo
        echo ">> the last lines of \"$phase\", which failed ($log)"
        tail -n "${PHASES_TAIL_LINES:-15}" "$log"
    done

echo
echo ">> make test phases (seconds, share, cores used; $file)"
awk -F'\t' '
    function show(i, depth,    j, share, cores, mark) {
        share = ""
        if (depth == 0 && total > 0) share = sprintf("%5.1f%%", 100 * secs[i] / total)
        cores = ""
        if (cpu[i] != "" && secs[i] > 0) cores = sprintf("%4.2f", cpu[i] / secs[i])
        mark = ""
        if (status[i] != 0) mark = "  FAILED (exit " status[i] ")"
        printf "%8.1f  %6s  %5s  %*s%s%s\n", secs[i], share, cores, 2 * depth, "", name[i], mark
        for (j = 1; j <= NR; j++) if (parent[j] == name[i] && j < i) show(j, depth + 1)
    }
    { name[NR] = $1; secs[NR] = $2; status[NR] = $3; parent[NR] = $4; cpu[NR] = $5
      if ($4 == "") { total += $2; totalcpu += $5 } }
    END {
        for (i = 1; i <= NR; i++) if (parent[i] == "") show(i, 0)
        printf "%8.1f  100.0%%  %5.2f  total of the phases (%.1f minutes)\n", total, (total > 0 ? totalcpu / total : 0), total / 60
        if (wall != "") printf "%8.1f                 make test from start to end (%.1f minutes)\n", wall, wall / 60
    }' wall="$wall" "$file"

