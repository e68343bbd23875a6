#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Fails when go.mod or go.sum of the project, or of a tool module under
# hack/tools, is not what `go mod tidy` would write. A tool module without a
# tool directive only pins a download (the cert-manager CRDs) that tidy
# would drop, so it is left out.

set -o errexit
set -o nounset
set -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"

status=0
for dir in . hack/tools/*/; do
    if [[ "${dir}" != "." ]] && ! grep -q '^tool ' "${dir}go.mod"; then
        continue
    fi
    if ! diff="$(cd "${dir}" && go mod tidy -diff)"; then
        echo "go mod tidy needed in ${dir}:"
        echo "${diff}"
        status=1
    fi
done
exit "${status}"
