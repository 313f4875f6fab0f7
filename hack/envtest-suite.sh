#!/usr/bin/env bash
# Runs controller-runtime's own envtest-based test packages against capstan:
# envtest, unchanged, starts capstan as its kube-apiserver and (unless
# ETCD is set) capstan as its etcd too, from a KUBEBUILDER_ASSETS directory
# `capstan envtest-assets` writes. Prints each package's ginkgo summary and
# the totals.
#
#   hack/envtest-suite.sh                 # every package below
#   hack/envtest-suite.sh pkg/client      # some of them
#
# Environment:
#   CR_VERSION   controller-runtime version (default: go.mod's, else v0.25.2)
#   WORK         scratch directory (default: a new temp dir, kept)
#   ETCD         an etcd binary to use instead of capstan's (bench/upstream/bin/etcd)
#   KUBECTL      a kubectl binary for the assets (default: kubectl on $PATH, if
#                any; envtest needs one only for its Kubectl helper)
#   GO_TEST_FLAGS  flags for go test (default: -count=1 -v -timeout 30m; -v for
#                  ginkgo's summary of a passing package)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

packages=("$@")
if [ ${#packages[@]} -eq 0 ]; then
	# The packages whose tests start envtest (grep -l envtest in their tests).
	packages=(pkg/envtest pkg/client pkg/client/apiutil pkg/cache pkg/cluster pkg/controller
		pkg/controller/controllerutil pkg/internal/controller pkg/builder pkg/handler pkg/source
		pkg/reconcile pkg/internal/recorder pkg/manager pkg/manager/internal/integration
		pkg/metrics/filters pkg/webhook)
fi
cr_version=${CR_VERSION:-$(go list -m -f '{{.Version}}' sigs.k8s.io/controller-runtime 2>/dev/null || echo v0.25.2)}
k8s_version=$(go list -m -f '{{.Version}}' k8s.io/client-go)
work=${WORK:-$(mktemp -d /tmp/capstan-envtest.XXXXXX)}
mkdir -p "$work/bin"
echo "work dir: $work; controller-runtime $cr_version; k8s.io/* $k8s_version" >&2

go build -o "$work/bin/capstan" ./cmd/capstan
"$work/bin/capstan" envtest-assets ${KUBECTL:+--kubectl "$KUBECTL"} "$work/assets" >&2
if [ -n "${ETCD:-}" ]; then
	ln -sf "$(readlink -f "$ETCD")" "$work/assets/etcd"
fi

# controller-runtime's module, as published, in a writable copy whose
# k8s.io modules are capstan's versions (shared build cache).
src=$(go mod download -json "sigs.k8s.io/controller-runtime@$cr_version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
cr=$work/controller-runtime
if [ ! -d "$cr" ]; then
	cp -r "$src" "$cr"
	chmod -R u+w "$cr"
	(cd "$cr" && go get "k8s.io/api@$k8s_version" "k8s.io/apimachinery@$k8s_version" "k8s.io/client-go@$k8s_version" \
		"k8s.io/apiextensions-apiserver@$k8s_version" "k8s.io/apiserver@$k8s_version" "k8s.io/component-base@$k8s_version" >&2)
fi

export KUBEBUILDER_ASSETS=$work/assets
total_pass=0 total_fail=0 total_skip=0 total_tpass=0 total_tfail=0 failed_pkgs=()
for p in "${packages[@]}"; do
	log=$work/$(echo "$p" | tr / _).log
	start=$(date +%s)
	set +e
	(cd "$cr" && go test ${GO_TEST_FLAGS:--count=1 -v -timeout 30m} "./$p" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log"; exit "${PIPESTATUS[0]}")
	rc=$?
	set -e
	secs=$(( $(date +%s) - start ))
	summary=$(grep -E '^(SUCCESS|FAIL)! -- ' "$log" | tail -1 || true)
	pass=$(echo "$summary" | sed -n 's/.* \([0-9]*\) Passed.*/\1/p'); pass=${pass:-0}
	fail=$(echo "$summary" | sed -n 's/.* \([0-9]*\) Failed.*/\1/p'); fail=${fail:-0}
	skip=$(echo "$summary" | sed -n 's/.* \([0-9]*\) Skipped.*/\1/p'); skip=${skip:-0}
	# Go tests (top-level and subtests) besides ginkgo's specs.
	tpass=$(grep -cE '^\s*--- PASS' "$log" || true) tfail=$(grep -cE '^\s*--- FAIL' "$log" || true)
	total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
	total_tpass=$((total_tpass + tpass)) total_tfail=$((total_tfail + tfail))
	if [ $rc -ne 0 ]; then
		failed_pkgs+=("$p")
	fi
	printf '%-36s rc=%d %4ds  specs passed %4d failed %3d skipped %3d; go tests passed %3d failed %3d\n' \
		"$p" "$rc" "$secs" "$pass" "$fail" "$skip" "$tpass" "$tfail"
	grep -E '^\s*\[FAIL\]|^\s*--- FAIL' "$log" | sed 's/^/    /' | sort -u || true
done
echo "total: specs passed $total_pass, failed $total_fail, skipped $total_skip; go tests passed $total_tpass, failed $total_tfail"
echo "packages failing: ${failed_pkgs[*]:-none}"
echo "logs: $work/*.log"
[ ${#failed_pkgs[@]} -eq 0 ]
