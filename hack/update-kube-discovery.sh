#!/usr/bin/env bash
# Records what capstan's discovery is compared with: kube-apiserver v1.37.2's
# resources on a fresh cluster, read by test/e2e's TestDiscoveryMatchesKube.
#
#   test/e2e/testdata/kube-discovery/api.json    GET /api  (aggregated discovery v2)
#   test/e2e/testdata/kube-discovery/apis.json   GET /apis (aggregated discovery v2)
#   test/e2e/testdata/kube-discovery/api-resources.txt
#                                                kubectl api-resources -o wide
#   test/e2e/testdata/kube-discovery/storage-versions.txt
#                                                each resource's storageVersionHash
#                                                (legacy discovery): the version
#                                                kube stores it at
#
# With BETA=1, kube-apiserver runs with --runtime-config=api/beta=true and
# the files go to test/e2e/testdata/kube-discovery-beta/, which
# TestDiscoveryMatchesKubeBeta reads.
#
# The JSON is normalised with jq (sorted keys, indented) so that a new
# recording diffs line by line. kube-apiserver and etcd are the upstream build
# under bench/upstream (built by its build.sh if missing); kubectl is
# hack/kubectl, the client the tests run, stamped v1.37.2 as testkit stamps it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
up="$root/bench/upstream"
out="$root/test/e2e/testdata/kube-discovery"
apiserver_args="${APISERVER_ARGS:-}"
if [[ "${BETA:-0}" == 1 ]]; then
  out="$out-beta"
  apiserver_args="$apiserver_args --runtime-config=api/beta=true"
fi
command -v jq >/dev/null || { echo "jq is required" >&2; exit 1; }
tmp="$(mktemp -d)"
mkdir -p "$out"
(cd "$root" && nice go build -o "$tmp/kubectl" -ldflags "\
  -X k8s.io/component-base/version.gitVersion=v1.37.2 \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=37 \
  -X k8s.io/component-base/version.gitTreeState=clean" ./hack/kubectl)
OUT="$tmp/upstream" APISERVER_ARGS="$apiserver_args" "$up/run.sh" >/dev/null
trap '"$up/stop.sh" "$tmp/upstream" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
# shellcheck disable=SC1091
source "$tmp/upstream/env"
accept='application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
for path in api apis; do
  curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" -H "Accept: $accept" "$SERVER/$path" |
    jq -S . > "$out/$path.json"
done
"$tmp/kubectl" --kubeconfig "$KUBECONFIG" api-resources -o wide > "$out/api-resources.txt"
get() { curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$SERVER/$1"; }
hashes='.groupVersion as $gv | .resources[] | select(.storageVersionHash) | "\($gv) \(.name) \(.storageVersionHash)"'
{
  get api/v1 | jq -r "$hashes"
  for gv in $(get apis | jq -r '.groups[].versions[].groupVersion'); do get "apis/$gv" | jq -r "$hashes"; done
} | sort > "$out/storage-versions.txt"
echo "recorded $(($(wc -l < "$out/api-resources.txt") - 1)) resources of kube-apiserver $(curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$SERVER/version" | jq -r .gitVersion)"
