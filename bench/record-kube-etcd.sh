#!/usr/bin/env bash
# Records what kube-apiserver v1.37.2 writes into etcd for CRDs, custom
# resources and a few built-in objects, as test/e2e/crd's TestKubeStoredObjects
# loads it into capstan's etcd (CI cannot build kube). It starts
# bench/upstream (kube-apiserver and etcd on 127.0.0.1, BUILD=0: the binaries
# must be built; with KUBE_APISERVER_ARGS below), creates the objects below
# through kube's API, reads their keys and values back from etcd's JSON
# gateway and stops both servers.
#
#   bench/record-kube-etcd.sh > test/e2e/crd/testdata/kube-etcd.txt
#
# The output is one line per key, "<key> <value in base64>", after comment
# lines that say how it was made. (The APIServices kube's aggregator
# registers for the CRDs' group versions are left out: capstan's aggregator
# does not store APIServices yet.)
#
# With KUBE_ENV set to the env file of a running bench/upstream/run.sh
# (started with APISERVER_ARGS set to KUBE_APISERVER_ARGS), it creates the
# objects there and records them, and leaves that server running
# (test/e2e/crd's TestKubeRoundTrip does so).
set -euo pipefail

# The flags kube-apiserver records with: a PodCertificateRequest is written
# at v1beta1 with the fields v1 lacks.
KUBE_APISERVER_ARGS="--runtime-config=certificates.k8s.io/v1beta1=true"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KEYS="$(mktemp -d "${TMPDIR:-/tmp}/capstan-record-keys.XXXXXX")"
# STARTED is the run.sh directory of the servers this script started (the
# env file sourced below sets OUT to the servers' own, started or not).
STARTED=""
cleanup() {
  rm -rf "$KEYS"
  if [[ -n "$STARTED" ]]; then "$HERE/upstream/stop.sh" "$STARTED" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
if [[ -z "${KUBE_ENV:-}" ]]; then
  STARTED="$(mktemp -d "${TMPDIR:-/tmp}/capstan-record.XXXXXX")"
  OUT="$STARTED" BUILD=0 AUTHZ=AlwaysAllow APISERVER_ARGS="$KUBE_APISERVER_ARGS" "$HERE/upstream/run.sh" >/dev/null
  KUBE_ENV="$STARTED/env"
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

# The kinds that went GA in 1.37, which kube stores at their 1.36 betas: a
# trust bundle, a storage version migration, a device taint rule and two
# pod certificate requests, one at v1 with a stub PKCS#10 request, one at
# v1beta1 with the public key and proof of possession v1 has no fields for
# (an Ed25519 key's, the proof signing the pod's UID).
api POST /apis/certificates.k8s.io/v1/clustertrustbundles "{
 \"metadata\":{\"name\":\"example.com:kubeform:one\"},
 \"spec\":{\"signerName\":\"example.com/kubeform\",\"trustBundle\":$(jq -Rs . < "$CA")}}"
api POST /apis/storagemigration.k8s.io/v1/storageversionmigrations \
  '{"metadata":{"name":"kubeform-configmaps"},"spec":{"resource":{"group":"","resource":"configmaps"}}}'
api POST /apis/resource.k8s.io/v1/devicetaintrules '{"metadata":{"name":"kubeform-drain"},
 "spec":{"deviceSelector":{"driver":"gpu.example.com"},"taint":{"key":"example.com/broken","value":"yes","effect":"NoSchedule"}}}'
openssl genpkey -algorithm ed25519 -out "$KEYS/key.pem" 2>/dev/null
openssl req -new -key "$KEYS/key.pem" -subj "/" -outform DER -out "$KEYS/csr.der"
printf 'legacy-pod-uid' > "$KEYS/uid"
pcr() { # name pod-uid fields
  printf '{"metadata":{"name":"%s"},"spec":{"signerName":"example.com/kubeform","podName":"web","podUID":"%s",
 "serviceAccountName":"default","serviceAccountUID":"sa-uid","nodeName":"node-1","nodeUID":"node-uid",%s}}' "$@"
}
api POST /apis/certificates.k8s.io/v1/namespaces/kubeform/podcertificaterequests \
  "$(pcr web pod-uid "\"stubPKCS10Request\":\"$(base64 -w0 < "$KEYS/csr.der")\"")"
api POST /apis/certificates.k8s.io/v1beta1/namespaces/kubeform/podcertificaterequests \
  "$(pcr legacy legacy-pod-uid "\"pkixPublicKey\":\"$(openssl pkey -in "$KEYS/key.pem" -pubout -outform DER | base64 -w0)\",
 \"proofOfPossession\":\"$(openssl pkeyutl -sign -inkey "$KEYS/key.pem" -rawin -in "$KEYS/uid" | base64 -w0)\"")"

b64() { printf '%s' "$1" | base64 -w0; }
cat <<HEADER
# What kube-apiserver v1.37.2 (etcd v3.7.3, --etcd-prefix /registry) stored
# for these objects, recorded by:
#   bench/record-kube-etcd.sh > test/e2e/crd/testdata/kube-etcd.txt
# One key a line: "<key> <value in base64>".
HEADER
curl -fsS -X POST "$ETCD_URL/v3/kv/range" \
  -d "{\"key\":\"$(b64 /registry/)\",\"range_end\":\"$(b64 /registry0)\"}" |
  jq -r '.kvs[] | [(.key | @base64d), .value] | @tsv' |
  awk -F '\t' '$1 ~ /kubeform/ && $1 !~ /apiregistration/ { print $1 " " $2 }'
