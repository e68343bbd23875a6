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

status=0
for dir in . hack/tools/*/; do
    if [[ "${dir}" != "." ]] && ! grep -q '^tool ' "${dir}go.mod" && [[ -z "$(find "${dir}" -name '*.go' -print -quit)" ]]; then
        continue
    fi
    toolchain=local
    tidy=(go mod tidy -diff)
    errors=/dev/stderr
    if grep -q '^go 1\.27' "${dir%/}/go.mod"; then
        # -e reports what it could not load: those tests' imports.
        toolchain=go1.27.3
        tidy+=(-e)
        errors=/dev/null
    fi
    if ! diff="$(cd "${dir}" && GOTOOLCHAIN="${toolchain}" "${tidy[@]}" 2>"${errors}")"; then
        echo "go mod tidy needed in ${dir}:"
        echo "${diff}"
        status=1
    fi
done
exit "${status}"
