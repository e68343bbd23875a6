#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Fails when go.mod or go.sum of the project, or of a tool module under
# hack/tools, is not what `go mod tidy` would write. A tool module without a
# tool directive or a package of its own only pins a download (the
# cert-manager CRDs) that tidy would drop, so it is left out. The module of
# Kubernetes 1.38's controllers needs Go 1.27, and the tests of its
# dependencies import staging modules the proxy does not serve (-e).

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

# Each module is tidied in a job of its own, side by side: tidy mostly
# waits on the module proxy (a cold run: a minute and more one after the
# other), and each writes its diff to a file of its own.
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT

tidy_module() {
    local dir=$1 report=$2
    local toolchain=local errors=/dev/stderr
    local tidy=(go mod tidy -diff)
    if grep -q '^go 1\.27' "${dir%/}/go.mod"; then
        # -e reports what it could not load: those tests' imports.
        toolchain=go1.27.3
        tidy+=(-e)
        errors=/dev/null
    fi
    local diff
    if ! diff="$(cd "${dir}" && GOTOOLCHAIN="${toolchain}" "${tidy[@]}" 2>"${errors}")"; then
        printf 'go mod tidy needed in %s:\n%s\n' "${dir}" "${diff}" >"${report}"
    fi
}

n=0
for dir in . hack/tools/*/; do
    if [[ "${dir}" != "." ]] && ! grep -q '^tool ' "${dir}go.mod" && [[ -z "$(find "${dir}" -name '*.go' -print -quit)" ]]; then
        continue
    fi
    n=$((n + 1))
    tidy_module "${dir}" "${out}/${n}" &
done
wait

status=0
for report in "${out}"/*; do
    [[ -e "${report}" ]] || continue
    cat "${report}"
    status=1
done
exit "${status}"
