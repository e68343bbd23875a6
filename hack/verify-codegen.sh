#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Fails when the generated code differs from what hack/update-codegen.sh
# produces from the types. The working tree is left as it was.

set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${SCRIPT_ROOT}"

SNAPSHOT="$(mktemp -d)"
trap 'rm -rf "${SNAPSHOT}"' EXIT

GENERATED=(pkg hack/api-rule-violations.list)
cp -a "${GENERATED[@]}" "${SNAPSHOT}/"

restore() {
    rm -rf pkg
    cp -a "${SNAPSHOT}/pkg" pkg
    cp -a "${SNAPSHOT}/api-rule-violations.list" hack/api-rule-violations.list
}

if ! hack/update-codegen.sh >/dev/null; then
    restore
    echo "hack/update-codegen.sh failed" >&2
    exit 1
fi

ret=0
diff -Naupr "${SNAPSHOT}/pkg" pkg || ret=$?
diff -Naup "${SNAPSHOT}/api-rule-violations.list" hack/api-rule-violations.list || ret=$?
if [[ ${ret} -ne 0 ]]; then
    restore
    echo "Generated code is out of date: run hack/update-codegen.sh (make update-codegen)." >&2
    exit 1
fi
echo "Generated code is up to date."
