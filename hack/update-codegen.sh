#!/usr/bin/env bash
# Regenerates the deepcopy functions (zz_generated.deepcopy.go) of capstan's
# own API types with k8s.io/code-generator's deepcopy-gen, at the version of
# k8s.io/apimachinery that go.mod pins. Run it after changing a type in one
# of the packages below.
#
#   hack/update-codegen.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version() { go list -m -f '{{.Version}}' "$1"; }
codegen_version="$(version k8s.io/apimachinery)"

# Packages whose doc.go carries +k8s:deepcopy-gen=package.
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
