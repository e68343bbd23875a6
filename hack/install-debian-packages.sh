#!/usr/bin/env bash

# Copyright The EvictionRequest API Server Authors.
# SPDX-License-Identifier: Apache-2.0

# Installs the given Debian packages with apt-get, as root or through sudo,
# refreshing the package lists once when a package is not found.

set -o errexit
set -o nounset
set -o pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 PACKAGE..." >&2
    exit 2
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
    SUDO=(sudo --non-interactive)
fi

export DEBIAN_FRONTEND=noninteractive
echo ">> Installing Debian packages: $*"
if ! "${SUDO[@]}" apt-get install --yes --no-install-recommends "$@"; then
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" apt-get install --yes --no-install-recommends "$@"
fi
