#!/usr/bin/env bash
# Records what capstan's pod defaults are compared with: the pods
# kube-apiserver v1.37.2 stores for the pods of
# test/e2e/admplugins/testdata/kube-pod-defaults/input.json, created in a fresh namespace
# with its default admission plugins (ServiceAccount, Priority,
# DefaultTolerationSeconds, ...), read by test/e2e's TestPodDefaultsMatchKube.
#
#   test/e2e/admplugins/testdata/kube-pod-defaults/kube.json   the created pods, as kube answered
#
# kube-apiserver runs alone (no controller-manager), so the script creates the
# namespace's service accounts itself, "default" included, as the
# serviceaccount controller would. kube-apiserver and etcd are the upstream
# build under bench/upstream (built by its build.sh if missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
up="$root/bench/upstream"
dir="$root/test/e2e/admplugins/testdata/kube-pod-defaults"
ns=pod-defaults
command -v jq >/dev/null || { echo "jq is required" >&2; exit 1; }
tmp="$(mktemp -d)"
OUT="$tmp/upstream" "$up/run.sh" >/dev/null
trap '"$up/stop.sh" "$tmp/upstream" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
# shellcheck disable=SC1091
source "$tmp/upstream/env"
post() { # path body
  curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -X POST --data-binary "$2" "$SERVER$1"
}
post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
jq -c '.serviceAccounts[]' "$dir/input.json" | while read -r sa; do
  post "/api/v1/namespaces/$ns/serviceaccounts" "$sa" >/dev/null
done
jq -c '.pods[]' "$dir/input.json" | while read -r pod; do
  post "/api/v1/namespaces/$ns/pods" "$pod"
done | jq -S -s . > "$dir/kube.json"
echo "recorded $(jq length "$dir/kube.json") pods of kube-apiserver $(curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$SERVER/version" | jq -r .gitVersion)"
