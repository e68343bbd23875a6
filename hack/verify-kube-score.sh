#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs kube-score over the install.yaml of every overlay of artifacts/, each
# the chart rendered with one of its ci/*-values.yaml (make manifests). A
# finding fails unless artifacts/kube-score-ignore.txt names its test with
# the reason it does not apply.

set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${SCRIPT_ROOT}"

KUBE_SCORE="${KUBE_SCORE:-_output/bin/kube-score}"

ignores=()
while read -r test _; do
  [[ -z "${test}" || "${test}" == \#* ]] && continue
  ignores+=(--ignore-test "${test}")
done < artifacts/kube-score-ignore.txt

OUT="$(mktemp -d)"
trap 'rm -rf "${OUT}"' EXIT
failed=0
for install in artifacts/overlays/*/install.yaml; do
  overlay="$(basename "$(dirname "${install}")")"
  if ! "${KUBE_SCORE}" score --output-format ci --exit-one-on-warning "${ignores[@]}" "${install}" > "${OUT}/${overlay}.txt"; then
    echo "kube-score finds, in overlay ${overlay}:"
    grep -v '^\[OK\]' "${OUT}/${overlay}.txt" || true
    failed=1
  fi
done
exit "${failed}"
