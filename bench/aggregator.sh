#!/usr/bin/env bash
# GETs and watch events through the aggregator proxy: capstan and upstream
# kube-apiserver v1.37.2, each in front of the same k8s.io/sample-apiserver
# (which authenticates and authorizes against capstan), on one etcd.
#
#   bench/aggregator.sh            (C=16 D=20s N=500 to change the load)
#   PROFILE=1 bench/aggregator.sh  also a CPU profile of capstan over its first GET round
#                                  (capstan-proxy-cpu.pb.gz and the binary, kept in the work dir)
#
# Needs bench/upstream/bin (bench/upstream/build.sh; or UPSTREAM_BIN) and openssl; builds
# capstan and uses the sample-apiserver the tests build
# (CAPSTAN_SAMPLE_APISERVER or the user cache).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d /tmp/capstan-aggbench.XXXXXX)"
log() { echo "aggregator.sh: $*" >&2; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [[ -e "$WORK/upstream/env" ]] && "$ROOT/bench/upstream/stop.sh" "$WORK/upstream" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# front-proxy CA and client certificate, shared by both servers
cd "$WORK"
openssl req -x509 -newkey rsa:2048 -nodes -keyout fp-ca.key -out fp-ca.crt -days 1 -subj /CN=front-proxy-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout fp.key -out fp.csr -subj /CN=front-proxy-client 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' > fp.ext
openssl x509 -req -in fp.csr -CA fp-ca.crt -CAkey fp-ca.key -CAcreateserial -out fp.crt -days 1 -extfile fp.ext 2>/dev/null
FP=(--requestheader-client-ca-file="$WORK/fp-ca.crt" --requestheader-allowed-names=front-proxy-client
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group
  --requestheader-extra-headers-prefix=X-Remote-Extra- --proxy-client-cert-file="$WORK/fp.crt" --proxy-client-key-file="$WORK/fp.key")

log "kube-apiserver and etcd"
OUT="$WORK/upstream" BUILD=0 ETCD_PREFIX=/kube APISERVER_ARGS="${FP[*]}" "$ROOT/bench/upstream/run.sh" >"$WORK/upstream.log" 2>&1
# shellcheck disable=SC1091
source "$WORK/upstream/env"
KUBE_KUBECONFIG="$KUBECONFIG"

log "capstan"
(cd "$ROOT" && go build -o "$WORK/capstan-bin" ./cmd/capstan && go build -o "$WORK/aggproxy" ./loadtest/aggproxy)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$WORK/capstan-bin" --bind-address=127.0.0.1 --secure-port="$port" --data-dir="$WORK/capstan" --etcd-servers="$ETCD_URL" \
  --etcd-prefix=/capstan --debug-socket-path="$WORK/capstan.sock" "${FP[@]}" >"$WORK/capstan.log" 2>&1 &
pids+=($!)
CAP_KUBECONFIG="$WORK/capstan/admin.kubeconfig"
for _ in $(seq 300); do [[ -e "$CAP_KUBECONFIG" ]] && kubectl --kubeconfig "$CAP_KUBECONFIG" get --raw /readyz >/dev/null 2>&1 && break; sleep 0.2; done

log "sample-apiserver"
SAMPLE="${CAPSTAN_SAMPLE_APISERVER:-$HOME/.cache/capstan/sample-apiserver-$(cd "$ROOT" && go list -m -f '{{.Version}}' k8s.io/apiserver)}"
sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SAMPLE" --secure-port="$sport" --bind-address=127.0.0.1 --cert-dir="$WORK/sample" --etcd-servers="$ETCD_URL" --etcd-prefix=/wardle \
  --kubeconfig="$CAP_KUBECONFIG" --authentication-kubeconfig="$CAP_KUBECONFIG" --authorization-kubeconfig="$CAP_KUBECONFIG" \
  --disable-admission-plugins=MutatingAdmissionPolicy,ValidatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
  >"$WORK/sample.log" 2>&1 &
pids+=($!)

register() {
  kubectl --kubeconfig "$1" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: wardle, namespace: default}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.wardle.example.com}
spec: {group: wardle.example.com, version: v1alpha1, groupPriorityMinimum: 1000, versionPriority: 15,
  insecureSkipTLSVerify: true, service: {namespace: default, name: wardle, port: $sport}}
YAML
  kubectl --kubeconfig "$1" wait --for=condition=Available --timeout=120s apiservice/v1alpha1.wardle.example.com >/dev/null
}
register "$CAP_KUBECONFIG"
register "$KUBE_KUBECONFIG"

C="${C:-16}" D="${D:-20s}" N="${N:-500}"
log "load: C=$C D=$D N=$N (load average $(cut -d' ' -f1-3 /proc/loadavg))"
"$WORK/aggproxy" -name kube-apiserver -kubeconfig "$KUBE_KUBECONFIG" -c "$C" -d "$D" -n "$N"
if [[ "${PROFILE:-0}" == 1 ]]; then
  secs="${D%s}"
  curl -s --unix-socket "$WORK/capstan.sock" "http://x/debug/pprof/profile?seconds=$secs" >"$WORK/capstan-proxy-cpu.pb.gz" &
  prof=$!
fi
"$WORK/aggproxy" -name capstan -kubeconfig "$CAP_KUBECONFIG" -c "$C" -d "$D" -n "$N"
if [[ "${PROFILE:-0}" == 1 ]]; then
  wait "$prof"
  log "kept $WORK: capstan-proxy-cpu.pb.gz (go tool pprof $WORK/capstan-bin $WORK/capstan-proxy-cpu.pb.gz)"
fi
"$WORK/aggproxy" -name kube-apiserver -kubeconfig "$KUBE_KUBECONFIG" -c "$C" -d "$D" -n "$N"
"$WORK/aggproxy" -name capstan -kubeconfig "$CAP_KUBECONFIG" -c "$C" -d "$D" -n "$N"
for name in capstan kube-apiserver; do
  pid=$([[ $name == capstan ]] && echo "${pids[0]}" || echo "$APISERVER_PID")
  echo "$name RSS: $(awk '/VmRSS/{print $2, $3}' /proc/"$pid"/status)"
done
