#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Runs kube-score over every rendered overlay of artifacts/, with the
# monitoring component and the overlay's eviction API bridge added, and over
# the chart rendered with each of its ci/*-values.yaml. A finding fails
# unless artifacts/kube-score-ignore.txt names its test with the reason it
# does not apply.

set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${SCRIPT_ROOT}"

KUBE_SCORE="${KUBE_SCORE:-_output/bin/kube-score}"
HELM="${HELM:-_output/bin/helm}"
CHART=charts/evictionrequest
OVERLAYS=(default ha cert-manager dev lifecycle)

ignores=()
while read -r test _; do
  [[ -z "${test}" || "${test}" == \#* ]] && continue
  ignores+=(--ignore-test "${test}")
done < artifacts/kube-score-ignore.txt

OUT="$(mktemp -d)"
trap 'rm -rf "${OUT}"' EXIT
failed=0
for overlay in "${OVERLAYS[@]}"; do
  bridge=eviction-bridge
  [[ "${overlay}" == lifecycle ]] && bridge=eviction-bridge-lifecycle
  go run ./hack/render "${overlay}" monitoring "${bridge}" > "${OUT}/${overlay}.yaml"
  if ! "${KUBE_SCORE}" score --output-format ci --exit-one-on-warning "${ignores[@]}" "${OUT}/${overlay}.yaml" > "${OUT}/${overlay}.txt"; then
    echo "kube-score finds, in overlay ${overlay}:"
    grep -v '^\[OK\]' "${OUT}/${overlay}.txt" || true
    failed=1
  fi
done
for values in "${CHART}"/ci/*-values.yaml; do
  scenario="$(basename "${values}" -values.yaml)"
  "${HELM}" template evictionrequest "${CHART}" --namespace evictionrequest-system --values "${values}" > "${OUT}/chart-${scenario}.yaml"
  if ! "${KUBE_SCORE}" score --output-format ci --exit-one-on-warning "${ignores[@]}" "${OUT}/chart-${scenario}.yaml" > "${OUT}/chart-${scenario}.txt"; then
    echo "kube-score finds, in the chart with ${values}:"
    grep -v '^\[OK\]' "${OUT}/chart-${scenario}.txt" || true
    failed=1
  fi
done
exit "${failed}"
