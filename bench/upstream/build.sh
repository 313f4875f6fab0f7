#!/usr/bin/env bash
# Build bin/kube-apiserver (k8s.io/kubernetes v1.37.2) and bin/etcd (v3.7.3).
# Niced and single-job: the machine is shared. A cold build takes ~20 min.
# The -X flags stamp /version like upstream's release build (hack/lib/version.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
K8S_VERSION="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"   # v1.37.2
major="${K8S_VERSION#v}"; major="${major%%.*}"
minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
# upstream release builds strip symbols (-s -w); DBG=1 keeps them (for perf).
ldflags=""
[[ "${DBG:-0}" == 1 ]] || ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
mkdir -p bin
start=$(date +%s)
GOFLAGS=-p=${JOBS:-1} nice -n 19 go build -p ${JOBS:-1} -ldflags "$ldflags" -o bin/ ./cmd/kube-apiserver ./cmd/etcd
echo "build.sh: built bin/kube-apiserver bin/etcd in $(( $(date +%s) - start ))s" >&2
