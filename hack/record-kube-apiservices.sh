#!/usr/bin/env bash
# Records what kube-apiserver v1.37.2 lists in `kubectl get apiservices`
# with the CRDs of aggregator/testdata/crds.yaml, into
# aggregator/testdata/kube-apiservices.txt (name, group priority, version
# priority, automanaged label), which TestAPIServicesMatchKube compares
# capstan against without the upstream binary.
#
#   bench/upstream/run.sh            (prints ENV=...; or OUT=dir run.sh)
#   hack/record-kube-apiservices.sh /tmp/capstan-upstream.XXXX/env
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1090
source "$1"
kubectl --kubeconfig "$KUBECONFIG" apply -f aggregator/testdata/crds.yaml >/dev/null
kubectl --kubeconfig "$KUBECONFIG" wait --for condition=established --timeout=60s -f aggregator/testdata/crds.yaml >/dev/null
# The CRD APIServices follow their CRDs a moment later.
for _ in $(seq 100); do
  n=$(kubectl --kubeconfig "$KUBECONFIG" get apiservices -o name | grep -c 'example' || true)
  [[ $n == 2 ]] && break
  sleep 0.1
done
{
  echo "# kubectl get apiservices of kube-apiserver v1.37.2 with aggregator/testdata/crds.yaml"
  echo "# recorded by hack/record-kube-apiservices.sh; columns: name groupPriorityMinimum versionPriority automanaged"
  kubectl --kubeconfig "$KUBECONFIG" get apiservices -o jsonpath='{range .items[*]}{.metadata.name} {.spec.groupPriorityMinimum} {.spec.versionPriority} {.metadata.labels.kube-aggregator\.kubernetes\.io/automanaged}{"\n"}{end}'
} > aggregator/testdata/kube-apiservices.txt
