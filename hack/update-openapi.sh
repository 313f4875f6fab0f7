#!/usr/bin/env bash
# Regenerates openapi/generated/zz_generated.openapi.go: the OpenAPI
# definitions of the k8s.io/api group versions capstan serves, of the other
# API types packages it imports (apiextensions.k8s.io/v1) and of the k8s.io/apimachinery
# types they use,
# made by kube-openapi's openapi-gen at the version go.mod pins. Run it after
# bumping k8s.io/api, k8s.io/apimachinery or k8s.io/kube-openapi, or after
# changing a type of capstan's apis/ packages (hack/update-codegen.sh first).
#
#   hack/update-openapi.sh            regenerate in place
#   hack/update-openapi.sh DIR        write the file into DIR instead (the
#                                     up-to-date test compares the two)
set -euo pipefail
cd "$(dirname "$0")/.."

out_dir="${1:-openapi/generated}"
out_pkg="github.com/capstan-io/capstan/openapi/generated"

version() { go list -m -f '{{.Version}}' "$1"; }
openapi_version="$(version k8s.io/kube-openapi)"

# The packages of k8s.io/api whose group versions capstan serves (add one
# when controlplane serves a new group version; test/e2e's TestOpenAPI fails
# without it); the beta versions --runtime-config may turn on are served
# too. The documents, like kube's, hold only the definitions that served
# paths reach, so the others (alphas, betas of no resource in 1.37, groups
# capstan does not serve) would only make the binary larger and the
# managed-fields types built at every start slower.
api_pkgs=(
  k8s.io/api/admissionregistration/v1
  k8s.io/api/admissionregistration/v1beta1
  k8s.io/api/apps/v1
  k8s.io/api/authentication/v1
  k8s.io/api/authorization/v1
  k8s.io/api/autoscaling/v1
  k8s.io/api/autoscaling/v2
  k8s.io/api/batch/v1
  k8s.io/api/certificates/v1
  k8s.io/api/certificates/v1beta1
  k8s.io/api/coordination/v1
  k8s.io/api/coordination/v1beta1
  k8s.io/api/core/v1
  k8s.io/api/discovery/v1
  k8s.io/api/events/v1
  k8s.io/api/flowcontrol/v1
  k8s.io/api/networking/v1
  k8s.io/api/node/v1
  k8s.io/api/policy/v1
  k8s.io/api/rbac/v1
  k8s.io/api/scheduling/v1
  k8s.io/api/resource/v1
  k8s.io/api/resource/v1beta1
  k8s.io/api/resource/v1beta2
  k8s.io/api/storage/v1
  k8s.io/api/storagemigration/v1
  k8s.io/api/storagemigration/v1beta1
  # batch/v1's Job refers to workload scheduling types of this one
  k8s.io/api/scheduling/v1alpha3
)
# API types of kube's other modules that capstan imports as data model
# (apiextensions.k8s.io/v1 and apiregistration.k8s.io/v1, with their generated protobuf).
own_pkgs=(
  k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
  k8s.io/kube-aggregator/pkg/apis/apiregistration/v1
)
machinery_pkgs=(
  k8s.io/apimachinery/pkg/api/resource
  k8s.io/apimachinery/pkg/apis/meta/v1
  k8s.io/apimachinery/pkg/apis/meta/v1beta1
  k8s.io/apimachinery/pkg/runtime
  k8s.io/apimachinery/pkg/util/intstr
  k8s.io/apimachinery/pkg/version
)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The header records the versions the file was made from, so a test can
# tell cheaply that it is stale.
cat >"$tmp/header.txt" <<HEADER
// Generated from k8s.io/api $(version k8s.io/api), k8s.io/apimachinery $(version k8s.io/apimachinery)
// by k8s.io/kube-openapi ${openapi_version} (hack/update-openapi.sh).

HEADER

mkdir -p "$out_dir"
# API rule violations of upstream types are not ours to fix: they go to a
# report file, which keeps openapi-gen from failing on them.
nice go run "k8s.io/kube-openapi/cmd/openapi-gen@${openapi_version}" \
  --go-header-file "$tmp/header.txt" \
  --output-dir "$out_dir" \
  --output-pkg "$out_pkg" \
  --output-file zz_generated.openapi.go \
  --report-filename "$tmp/violations.report" \
  "${api_pkgs[@]}" "${own_pkgs[@]}" "${machinery_pkgs[@]}"
gofmt -w "$out_dir/zz_generated.openapi.go"
