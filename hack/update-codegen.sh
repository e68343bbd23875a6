#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Regenerates everything under pkg/generated and every zz_generated file from
# the types in pkg/apis: deepcopy, defaulters, conversions, OpenAPI and the
# typed client with watch, listers, informers and apply configurations.

set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${SCRIPT_ROOT}"

THIS_PKG="github.com/evictionrequest/apiserver"
BOILERPLATE="${SCRIPT_ROOT}/hack/boilerplate.go.txt"

# The generators are installed into _output, never into the user's GOPATH.
export GOBIN="${SCRIPT_ROOT}/_output/codegen/bin"
mkdir -p "${GOBIN}"

CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
if [[ -z "${CODEGEN_PKG}" || ! -d "${CODEGEN_PKG}" ]]; then
    go mod download k8s.io/code-generator
    CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
fi
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

kube::codegen::gen_openapi \
    --output-dir "${SCRIPT_ROOT}/pkg/generated/openapi" \
    --output-pkg "${THIS_PKG}/pkg/generated/openapi" \
    --output-model-name-file "zz_generated.model_name.go" \
    --report-filename "${SCRIPT_ROOT}/hack/api-rule-violations.list" \
    --update-report \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema <(go run "${THIS_PKG}/pkg/generated/openapi/cmd/models-schema") \
    --output-dir "${SCRIPT_ROOT}/pkg/generated" \
    --output-pkg "${THIS_PKG}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"
