#!/usr/bin/env bash
# Records what capstan's /metrics is compared with: kube-apiserver
# v1.37.2's metric families (name, type, label names) after the workload
# of test/e2e/metrics' mixedWorkload, into test/e2e/metrics/testdata/kube-metric-families.txt
# (read by TestMetricFamiliesMatchKube). kube-apiserver and etcd come from
# bench/upstream (built by its build.sh if missing; ~20 min cold).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
up="$root/bench/upstream"
[[ -x "$up/bin/kube-apiserver" ]] || "$up/build.sh"
cd "$root"
CAPSTAN_UPSTREAM_BIN="$up/bin" CAPSTAN_RECORD_KUBE_METRICS=1 \
  go test -count=1 -run '^TestRecordKubeMetricFamilies$' -v ./test/e2e/metrics/ | grep -E 'recorded|FAIL|ok' 
