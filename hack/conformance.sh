#!/usr/bin/env bash
# Runs kube's own conformance specs (the e2e.test of k8s.io/kubernetes
# v1.37.2, unchanged) against a fresh capstan with no nodes, and prints
# ginkgo's summary.
#
#   hack/conformance.sh                       # every no-node [sig-api-machinery] [Conformance] spec
#   SPECS=vap hack/conformance.sh             # every ValidatingAdmissionPolicy and MutatingAdmissionPolicy spec
#   SPECS=quota hack/conformance.sh           # the ResourceQuota [Conformance] specs
#   SPECS='Watchers should' hack/conformance.sh   # a ginkgo focus regex of your own
#
# The specs that cannot pass without a kubelet or a controller capstan does
# not run are listed below (needs_cluster) with the reason, and are skipped
# in every set: the script prints each skipped spec of the focus before the
# run, so nothing is skipped silently.
#
# e2e.test is built once from bench/upstream (its conformance.mod adds the
# e2e suite's dependencies to the module's go.mod, which stays as the
# kube-apiserver build needs it) into bench/upstream/bin/e2e.test (ignored by
# git) and reused; a cold build takes about 20 minutes of one core, niced.
# -vet=off: go test -c would otherwise vet the suite, which means computing
# vet facts for each of its ~2800 dependencies after the link.
# Not part of CI for that reason.
#
# Environment (all optional):
#   SPECS       nonode (default), vap, quota, or a ginkgo focus regex
#   E2E_TEST    an e2e.test binary to use (default bench/upstream/bin/e2e.test, built if missing)
#   CAPSTAN     a capstan binary to test (default: built from this tree)
#   KUBECTL     the kubectl some specs run (default: built from hack/kubectl)
#   WORK        scratch directory: capstan's data, logs, junit (default: a new temp dir, kept)
#   NICE        niceness of builds, capstan and e2e.test (default 19: the machine is shared)
#   CAPSTAN_ARGS  extra capstan flags
#   GINKGO_ARGS   extra e2e.test flags (e.g. --ginkgo.v)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

specs=${SPECS:-nonode}
nice=${NICE:-19}
upstream=$root/bench/upstream
e2e=${E2E_TEST:-$upstream/bin/e2e.test}
work=${WORK:-$(mktemp -d /tmp/capstan-conformance.XXXXXX)}
mkdir -p "$work/bin" "$work/report"
log() { echo "conformance.sh: $*" >&2; }

# Specs of the sets below that need what capstan alone does not have: a
# kubelet to run a pod, or a workload controller of kube-controller-manager
# (capstan runs only the loops README's --controllers lists). One line each:
# a regex (ERE and Go regexp alike) and the reason.
needs_cluster=(
	'\[sig-api-machinery\] AdmissionWebhook |the webhook server is a pod of a Deployment (sample-webhook image): needs the deployment controller and a kubelet'
	'\[sig-api-machinery\] CustomResourceConversionWebhook |the conversion webhook is a pod of a Deployment: needs the deployment controller and a kubelet'
	'\[sig-api-machinery\] CustomResourceFieldSelectors |its BeforeEach deploys the conversion webhook of CustomResourceConversionWebhook, a pod of a Deployment: needs the deployment controller and a kubelet'
	'\[sig-api-machinery\] Aggregator Should be able to support the 1.17 Sample API Server|the sample API server and its etcd are a pod of a Deployment: needs the deployment controller and a kubelet'
	'\[sig-api-machinery\] Garbage collector should (delete|orphan) RS created by deployment|waits for the deployment controller to create the ReplicaSet'
	'\[sig-api-machinery\] Garbage collector should (delete pods created by rc|orphan pods created by rc|keep the rc around|not delete dependents that have both valid owner)|waits for the replication controller to create the pods'
	'\[sig-api-machinery\] Namespaces .*should ensure that all pods are removed when a namespace is deleted|waits for its pod to be Running: needs a kubelet'
	'\[sig-api-machinery\] OrderedNamespaceDeletion namespace deletion should delete pod first|waits for its pod to be Running: needs a kubelet'
)

case $specs in
nonode) focus='\[sig-api-machinery\] .*\[Conformance\]' ;;
vap) focus='\[sig-api-machinery\] (ValidatingAdmissionPolicy|MutatingAdmissionPolicy) ' ;;
quota) focus='\[sig-api-machinery\] ResourceQuota .*\[Conformance\]' ;;
*) focus=$specs ;;
esac

# --- binaries -------------------------------------------------------------------
if [ -z "${E2E_TEST:-}" ] && { [ ! -x "$e2e" ] || [ "$upstream/conformance.mod" -nt "$e2e" ] || [ "$upstream/conformance.sum" -nt "$e2e" ]; }; then
	log "building $e2e from k8s.io/kubernetes/test/e2e (slow: about 20 minutes cold)"
	(cd "$upstream" && GOFLAGS=-p=1 nice -n "$nice" go test -c -p 1 -vet=off -modfile=conformance.mod \
		-ldflags '-s -w' -o "$e2e" k8s.io/kubernetes/test/e2e)
fi
capstan=${CAPSTAN:-$work/bin/capstan}
if [ -z "${CAPSTAN:-}" ]; then
	log "building capstan"
	nice -n "$nice" go build -o "$capstan" ./cmd/capstan
fi
kubectl=${KUBECTL:-$work/bin/kubectl}
if [ -z "${KUBECTL:-}" ]; then
	# Stamped as a release, as internal/testkit builds it: kubectl checks versions.
	v=$(go list -m -f '{{.Version}}' k8s.io/kubectl) v=v1.${v#v0.}
	minor=${v#v1.} minor=${minor%%.*}
	nice -n "$nice" go build -o "$kubectl" -ldflags "-X k8s.io/component-base/version.gitVersion=$v \
		-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
		-X k8s.io/component-base/version.gitTreeState=clean" ./hack/kubectl
fi

# --- the specs in focus, and the ones skipped ---------------------------------------
"$e2e" --list-tests 2>/dev/null | sed -n 's/^    [^ ]*:[0-9]*: //p' >"$work/all-specs.txt"
grep -E -- "$focus" "$work/all-specs.txt" >"$work/focus-specs.txt" || true
skips=() skipped=0
for entry in "${needs_cluster[@]}"; do
	# The regex may hold '|' itself: the reason is after the last one.
	re=${entry%|*} why=${entry##*|}
	skips+=("--ginkgo.skip=$re")
	while IFS= read -r name; do
		echo "SKIP ($why): $name"
		skipped=$((skipped + 1))
	done < <(grep -E -- "$re" "$work/focus-specs.txt" || true)
done
infocus=$(wc -l <"$work/focus-specs.txt")
log "SPECS=$specs: $infocus specs in focus, $skipped skipped above, $((infocus - skipped)) to run"
[ "$infocus" -gt 0 ] || { log "no spec matches $focus"; exit 1; }

# --- capstan ----------------------------------------------------------------------
# As README's first command, with its data in $work. --etcd-compaction-interval:
# the [Slow] chunking spec waits for a compaction to expire its continue token
# (kube's default interval, 5m, makes it wait up to ten minutes).
# shellcheck disable=SC2086
nice -n "$nice" "$capstan" --data-dir "$work/data" --bind-address 127.0.0.1 --secure-port 0 \
	--unsafe-no-fsync --etcd-compaction-interval 1m ${CAPSTAN_ARGS:-} >"$work/capstan.log" 2>&1 &
capstan_pid=$!
trap 'kill "$capstan_pid" 2>/dev/null; wait "$capstan_pid" 2>/dev/null || true' EXIT
for i in $(seq 1 240); do
	grep -q '^capstan is serving at' "$work/capstan.log" && break
	kill -0 "$capstan_pid" 2>/dev/null || { tail -20 "$work/capstan.log" >&2; log "capstan exited"; exit 1; }
	[ "$i" -lt 240 ] || { log "capstan not ready after 120s"; exit 1; }
	sleep 0.5
done
kubeconfig=$work/data/admin.kubeconfig
log "capstan ready ($(grep -m1 '^capstan is serving at' "$work/capstan.log")); log in $work/capstan.log"

# --- the run ------------------------------------------------------------------------
# No nodes: --allowed-not-ready-nodes=-1 skips the wait for schedulable nodes
# and for kube-system's pods; --num-nodes=0 the count of ready nodes (an error
# when there are none).
set +e
# shellcheck disable=SC2086
nice -n "$nice" "$e2e" --provider=skeleton --kubeconfig="$kubeconfig" --kubectl-path="$kubectl" \
	--allowed-not-ready-nodes=-1 --num-nodes=0 --report-dir="$work/report" --e2e-output-dir="$work" \
	--ginkgo.focus="$focus" "${skips[@]}" --ginkgo.timeout=3h --ginkgo.no-color ${GINKGO_ARGS:-} \
	>"$work/e2e.log" 2>&1
rc=$?
set -e
sed -n '/^Summarizing [0-9]* Failure/,$p' "$work/e2e.log"
grep -E '^Ran [0-9]+ of [0-9]+ Specs|^(SUCCESS|FAIL)! -- ' "$work/e2e.log" | tail -2
log "e2e.test exit $rc; full output in $work/e2e.log, junit in $work/report"
exit "$rc"
