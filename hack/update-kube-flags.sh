#!/usr/bin/env bash
# Records what capstan's command line is compared with: kube-apiserver
# v1.37.2's --help (app/testdata/kube-apiserver-help.txt, read by
# TestFlagsMatchKubeAPIServer) and its feature gates (app/kube/featuregates.tsv,
# embedded for --feature-gates). Both come from the upstream build under
# bench/upstream (built by its build.sh if missing; ~20 min cold).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
up="$root/bench/upstream"
[[ -x "$up/bin/kube-apiserver" ]] || "$up/build.sh"
mkdir -p "$root/app/testdata"
(cd "$up" && GOFLAGS=-p=1 nice -n 19 go build -o bin/ ./cmd/kube-featuregates)
{
  echo "# kube-apiserver --help, v1.37.2, recorded by hack/update-kube-flags.sh"
  COLUMNS=80 "$up/bin/kube-apiserver" --help 2>&1
} > "$root/app/testdata/kube-apiserver-help.txt"
{
  echo "# kube-apiserver v1.37.2 feature gates (name, default, locked, stage), recorded by hack/update-kube-flags.sh"
  "$up/bin/kube-featuregates"
} > "$root/app/kube/featuregates.tsv"
echo "recorded $(grep -cE '^ +(-[a-z], )?--' "$root/app/testdata/kube-apiserver-help.txt") flags and $(grep -vc '^#' "$root/app/kube/featuregates.tsv") feature gates"
