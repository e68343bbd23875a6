#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Regenerates everything under pkg/generated and every zz_generated file from
# the types in pkg/apis: deepcopy, defaulters, conversions, OpenAPI, the
# protobuf serialization of the versioned types (generated.proto and
# generated.pb.go, and the protobuf tags of their fields), and the typed
# client with watch, listers, informers and apply configurations, which
# speaks protobuf.

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

# moduleDir prints the directory of a module of the build, downloading it
# when the module cache does not have it yet.
moduleDir() {
    go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# go-to-protobuf resolves the .proto files a package imports by their Go
# import path under --output-dir, GOPATH style: a tree of links to this
# repository and to the modules whose .proto files ours import (meta/v1's,
# and gogo's descriptor.proto that protoc-gen-gogo reads). It runs protoc
# (Debian's protobuf-compiler) with protoc-gen-gogo, then rewrites the
# output to need no gogo package at run time.
gen_protobuf() {
    command -v protoc >/dev/null || "${SCRIPT_ROOT}/hack/install-debian-packages.sh" protobuf-compiler
    go install k8s.io/code-generator/cmd/go-to-protobuf \
        k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo \
        golang.org/x/tools/cmd/goimports

    local tree="${SCRIPT_ROOT}/_output/codegen/protobuf-src"
    rm -rf "${tree}"
    mkdir -p "${tree}/github.com/evictionrequest" "${tree}/github.com/gogo" "${tree}/k8s.io"
    ln -s "${SCRIPT_ROOT}" "${tree}/github.com/evictionrequest/apiserver"
    ln -s "$(moduleDir github.com/gogo/protobuf)" "${tree}/github.com/gogo/protobuf"
    ln -s "$(moduleDir k8s.io/apimachinery)" "${tree}/k8s.io/apimachinery"

    PATH="${GOBIN}:${PATH}" "${GOBIN}/go-to-protobuf" \
        --go-header-file "${BOILERPLATE}" \
        --output-dir "${tree}" \
        --proto-import "${tree}/github.com/gogo/protobuf/protobuf" \
        --apimachinery-packages "-k8s.io/apimachinery/pkg/util/intstr,-k8s.io/apimachinery/pkg/api/resource,-k8s.io/apimachinery/pkg/runtime/schema,-k8s.io/apimachinery/pkg/runtime,-k8s.io/apimachinery/pkg/apis/meta/v1" \
        --packages "${THIS_PKG}/pkg/apis/coordination/v1alpha1"
}

gen_protobuf

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
    --prefers-protobuf \
    --with-applyconfig \
    --applyconfig-openapi-schema <(go run "${THIS_PKG}/pkg/generated/openapi/cmd/models-schema") \
    --output-dir "${SCRIPT_ROOT}/pkg/generated" \
    --output-pkg "${THIS_PKG}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"
