#!/usr/bin/env bash
# Regenerates openapi/generated/zz_generated.openapi.go: the OpenAPI
# definitions of every type in k8s.io/api, of capstan's own API types (like
# apiextensions.k8s.io/v1) and of the k8s.io/apimachinery types they use,
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

# Every package of k8s.io/api that asks for definitions, and the
# apimachinery packages of the types they refer to.
api_pkgs=()
while read -r dir pkg; do
  if grep -qs '^// +k8s:openapi-gen=true' "$dir"/doc.go; then
    api_pkgs+=("$pkg")
  fi
done < <(go list -f '{{.Dir}} {{.ImportPath}}' k8s.io/api/...)
# capstan's own API types, of groups kube serves from modules capstan does
# not import; their definition names are kube's through
# +k8s:openapi-model-package.
own_pkgs=(
  github.com/capstan-io/capstan/apis/apiextensions/v1
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
