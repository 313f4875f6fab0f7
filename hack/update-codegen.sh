#!/usr/bin/env bash
# Regenerates the generated code of capstan's own API types, in each
# package below:
#   zz_generated.deepcopy.go    deepcopy-gen of k8s.io/code-generator, at the
#                               version of k8s.io/apimachinery go.mod pins
#   zz_generated.model_name.go  OpenAPIModelName methods, from openapi-gen of
#                               the k8s.io/kube-openapi go.mod pins, for
#                               packages tagged +k8s:openapi-model-package
# Run it after changing a type in one of the packages below, then
# hack/update-openapi.sh for their OpenAPI definitions.
#
#   hack/update-codegen.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version() { go list -m -f '{{.Version}}' "$1"; }
codegen_version="$(version k8s.io/apimachinery)"
openapi_version="$(version k8s.io/kube-openapi)"

# Packages whose doc.go carries +k8s:deepcopy-gen=package and
# +k8s:openapi-model-package.
pkgs=(
  ./apis/apiextensions/v1
)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/header.txt" <<HEADER
// Made by k8s.io/code-generator ${codegen_version} (hack/update-codegen.sh).

HEADER

nice go run "k8s.io/code-generator/cmd/deepcopy-gen@${codegen_version}" \
  --go-header-file "$tmp/header.txt" \
  --output-file zz_generated.deepcopy.go \
  "${pkgs[@]}"
for pkg in "${pkgs[@]}"; do
  gofmt -w "$pkg/zz_generated.deepcopy.go"
done

# openapi-gen writes the model name files next to the types; the OpenAPI
# definitions it also makes are thrown away (hack/update-openapi.sh makes
# the real ones).
cat >"$tmp/header.txt" <<HEADER
// Made by k8s.io/kube-openapi ${openapi_version} (hack/update-codegen.sh).

HEADER
nice go run "k8s.io/kube-openapi/cmd/openapi-gen@${openapi_version}" \
  --go-header-file "$tmp/header.txt" \
  --output-model-name-file zz_generated.model_name.go \
  --output-dir "$tmp/openapi" \
  --output-pkg github.com/capstan-io/capstan/unused \
  --output-file zz_generated.openapi.go \
  --report-filename "$tmp/violations.report" \
  "${pkgs[@]}"
for pkg in "${pkgs[@]}"; do
  gofmt -w "$pkg/zz_generated.model_name.go"
done
