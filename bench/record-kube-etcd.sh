#!/usr/bin/env bash
# Records what kube-apiserver v1.37.2 writes into etcd for CRDs, custom
# resources and a few built-in objects, as test/e2e's TestKubeStoredObjects
# loads it into capstan's etcd (CI cannot build kube). It starts
# bench/upstream (kube-apiserver and etcd on 127.0.0.1, BUILD=0: the binaries
# must be built), creates the objects below through kube's API, reads their
# keys and values back from etcd's JSON gateway and stops both servers.
#
#   bench/record-kube-etcd.sh > test/e2e/testdata/kube-etcd.txt
#
# The output is one line per key, "<key> <value in base64>", after comment
# lines that say how it was made. (The APIServices kube's aggregator
# registers for the CRDs' group versions are left out: capstan's aggregator
# does not store APIServices yet.)
#
# With KUBE_ENV set to the env file of a running bench/upstream/run.sh, it
# creates the objects there and records them, and leaves that server running
# (test/e2e's TestKubeRoundTrip does so).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -z "${KUBE_ENV:-}" ]]; then
  OUT="$(mktemp -d "${TMPDIR:-/tmp}/capstan-record.XXXXXX")"
  trap '"$HERE/upstream/stop.sh" "$OUT" >/dev/null 2>&1 || true' EXIT
  OUT="$OUT" BUILD=0 AUTHZ=AlwaysAllow "$HERE/upstream/run.sh" >/dev/null
  KUBE_ENV="$OUT/env"
fi
# shellcheck disable=SC1090
source "$KUBE_ENV"

api() { # method path body [content type]
  curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" -H "Content-Type: ${4:-application/json}" \
    -X "$1" "$SERVER$2" --data-binary "$3" >/dev/null
}
established() { # crd name
  for _ in $(seq 1 100); do
    curl -fsS --cacert "$CA" -H "Authorization: Bearer $TOKEN" \
      "$SERVER/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$1" |
      jq -e '.status.conditions[]? | select(.type=="Established" and .status=="True")' >/dev/null && return 0
    sleep 0.2
  done
  echo "record-kube-etcd.sh: $1 never became established" >&2
  return 1
}

api POST /api/v1/namespaces '{"metadata":{"name":"kubeform"}}'
api POST /api/v1/namespaces/kubeform/configmaps \
  '{"metadata":{"name":"settings","labels":{"app":"kubeform"}},"data":{"mode":"kube","replicas":"3"}}'
api POST /api/v1/namespaces/kubeform/secrets \
  '{"metadata":{"name":"token"},"type":"Opaque","data":{"token":"a3ViZQ=="}}'

# Widgets: namespaced, v1 stored and v1beta1 served (conversion None), a
# default, status and scale subresources, printer columns and a selectable field.
api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{
 "metadata":{"name":"widgets.kubeform.example.com","labels":{"app":"kubeform"}},
 "spec":{"group":"kubeform.example.com","scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wd"],"categories":["all"]},
  "versions":[
   {"name":"v1","served":true,"storage":true,
    "schema":{"openAPIV3Schema":{"type":"object","properties":{
     "spec":{"type":"object","properties":{
      "size":{"type":"integer","minimum":1,"default":1},
      "color":{"type":"string","enum":["red","blue"]},
      "replicas":{"type":"integer"}}},
     "status":{"type":"object","properties":{"replicas":{"type":"integer"},"phase":{"type":"string"}}}}}},
    "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
    "additionalPrinterColumns":[{"name":"Color","type":"string","jsonPath":".spec.color"}],
    "selectableFields":[{"jsonPath":".spec.color"}]},
   {"name":"v1beta1","served":true,"storage":false,
    "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}'
# Gadgets: cluster-scoped, one version, a CEL rule.
api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{
 "metadata":{"name":"gadgets.kubeform.example.com"},
 "spec":{"group":"kubeform.example.com","scope":"Cluster",
  "names":{"plural":"gadgets","kind":"Gadget"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
    "x-kubernetes-validations":[{"rule":"self.max >= self.min","message":"max below min"}],
    "properties":{"min":{"type":"integer"},"max":{"type":"integer"}}}}}}}]}}'
established widgets.kubeform.example.com
established gadgets.kubeform.example.com

api POST /apis/kubeform.example.com/v1/namespaces/kubeform/widgets \
  '{"apiVersion":"kubeform.example.com/v1","kind":"Widget","metadata":{"name":"w1","labels":{"app":"kubeform"}},"spec":{"color":"red","replicas":2}}'
api PATCH /apis/kubeform.example.com/v1/namespaces/kubeform/widgets/w1/status \
  '{"status":{"replicas":2,"phase":"Ready"}}' application/merge-patch+json
# Written at v1beta1, stored at v1.
api POST /apis/kubeform.example.com/v1beta1/namespaces/kubeform/widgets \
  '{"apiVersion":"kubeform.example.com/v1beta1","kind":"Widget","metadata":{"name":"w2"},"spec":{"color":"blue","size":4}}'
api POST /apis/kubeform.example.com/v1/gadgets \
  '{"apiVersion":"kubeform.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"min":1,"max":5}}'

b64() { printf '%s' "$1" | base64 -w0; }
cat <<HEADER
# What kube-apiserver v1.37.2 (etcd v3.7.3, --etcd-prefix /registry) stored
# for these objects, recorded by:
#   bench/record-kube-etcd.sh > test/e2e/testdata/kube-etcd.txt
# One key a line: "<key> <value in base64>".
HEADER
curl -fsS -X POST "$ETCD_URL/v3/kv/range" \
  -d "{\"key\":\"$(b64 /registry/)\",\"range_end\":\"$(b64 /registry0)\"}" |
  jq -r '.kvs[] | [(.key | @base64d), .value] | @tsv' |
  awk -F '\t' '$1 ~ /kubeform/ && $1 !~ /apiregistration/ { print $1 " " $2 }'
