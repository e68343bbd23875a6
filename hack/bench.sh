#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs the benchmarks of the working tree and of a base revision side by
# side, alternating rounds so that both see the same machine, and prints the
# comparison as benchstat ratios (delta %, with confidence).
#
#   BASE      the revision to compare with (default: HEAD)
#   COUNT     rounds of each (default: 6; benchstat wants at least 6)
#   BENCH     benchmark regexp (default: .)
#   PACKAGES  packages with benchmarks (default: ./pkg/...)

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

BASE="${BASE:-HEAD}"
COUNT="${COUNT:-6}"
BENCH="${BENCH:-.}"
# PACKAGES is a space-separated list, split into an array once.
read -r -a PACKAGES <<< "${PACKAGES:-./pkg/...}"
OUT="${ROOT}/_output/bench"
BENCHSTAT="${ROOT}/_output/bin/benchstat"

mkdir -p "${OUT}"
if [[ ! -x "${BENCHSTAT}" || hack/tools/benchstat/go.mod -nt "${BENCHSTAT}" ]]; then
    echo ">> Building benchstat"
    (cd hack/tools/benchstat && go build -o "${BENCHSTAT}" golang.org/x/perf/cmd/benchstat)
fi

BASE_TREE="${OUT}/base"
git worktree remove --force "${BASE_TREE}" >/dev/null 2>&1 || rm -rf "${BASE_TREE}"
git worktree add --detach "${BASE_TREE}" "${BASE}" >/dev/null
trap 'git worktree remove --force "${BASE_TREE}" >/dev/null 2>&1 || true' EXIT

run() {
    (cd "$1" && go test -run '^$' -bench "${BENCH}" -benchmem -count 1 "${PACKAGES[@]}")
}

: > "${OUT}/base.txt"
: > "${OUT}/new.txt"
echo ">> Comparing the working tree with ${BASE} ($(git rev-parse --short "${BASE}")), ${COUNT} alternating rounds"
for round in $(seq "${COUNT}"); do
    echo ">> Round ${round}/${COUNT}"
    run "${BASE_TREE}" >> "${OUT}/base.txt"
    run "${ROOT}" >> "${OUT}/new.txt"
done
"${BENCHSTAT}" base="${OUT}/base.txt" new="${OUT}/new.txt"
