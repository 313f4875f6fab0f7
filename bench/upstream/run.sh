#!/usr/bin/env bash
# Start upstream kube-apiserver (k8s.io/kubernetes v1.37.2) against a fresh etcd
# (v3.7.3), both on 127.0.0.1 only, and leave them running in the background.
#
# Environment (all optional):
#   OUT           working dir (certs, tokens, kubeconfig, logs, etcd data);
#                 default: a new mktemp dir under ${TMPDIR:-/tmp}
#   ETCD_PREFIX   --etcd-prefix for kube-apiserver            (default /registry)
#   AUTHZ         --authorization-mode                          (default RBAC;
#                 e.g. AlwaysAllow, or Node,RBAC)
#   APF           --enable-priority-and-fairness               (default true)
#   SECURE_PORT   kube-apiserver port                          (default: a free one)
#   ETCD_PORT     etcd client port                             (default: a free one)
#   UPSTREAM_BIN  directory of the kube-apiserver and etcd binaries (default
#                 bench/upstream/bin; with another, BUILD=0 is wise)
#   USE_ETCD      client URL(s, comma-separated) of an etcd already running: start none (a second
#                 kube-apiserver on the etcd of an earlier run)
#   NICE          niceness for both servers                    (default 0)
#   BUILD         1: always rebuild; 0: never build            (default: only if stale)
#   ETCD_ARGS     extra etcd flags (e.g. "--unsafe-no-fsync")
#   APISERVER_ARGS extra kube-apiserver flags (e.g. "--v=2")
#   READY_TIMEOUT seconds to wait for /readyz                 (default 300)
#
# On success prints KUBECONFIG path, PIDs and an env file ($OUT/env) that
# stop.sh and scripts can source. Stop with: ./stop.sh [OUT]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="${UPSTREAM_BIN:-$HERE/bin}"
ETCD_PREFIX="${ETCD_PREFIX:-/registry}"
AUTHZ="${AUTHZ:-RBAC}"
APF="${APF:-true}"
NICE="${NICE:-0}"
READY_TIMEOUT="${READY_TIMEOUT:-300}"

log() { echo "run.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- build --------------------------------------------------------------------
need_build=0
case "${BUILD:-}" in
  1) need_build=1 ;;
  0) need_build=0 ;;
  *)
    for b in kube-apiserver etcd; do
      [[ -x "$BIN/$b" ]] || need_build=1
    done
    if [[ $need_build == 0 ]]; then
      for src in "$HERE/go.mod" "$HERE/go.sum" "$HERE/build.sh" "$HERE"/cmd/*/*.go; do
        for b in kube-apiserver etcd; do
          [[ "$src" -nt "$BIN/$b" ]] && need_build=1
        done
      done
    fi ;;
esac
if [[ $need_build == 1 ]]; then
  log "building kube-apiserver and etcd into $BIN (slow: see README)"
  "$HERE/build.sh"
fi
for b in kube-apiserver etcd; do [[ -x "$BIN/$b" ]] || die "missing $BIN/$b"; done

command -v openssl >/dev/null || die "openssl is required (apt-get install openssl)"
command -v curl >/dev/null || die "curl is required (apt-get install curl)"

# --- working dir and free ports -----------------------------------------------
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/capstan-upstream.XXXXXX")}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
[[ -e "$OUT/env" ]] && die "$OUT/env exists: a run may still be using $OUT (stop it first, or pick another OUT)"
echo "$OUT" > "$HERE/.last-out"

port_in_use() {
  if command -v ss >/dev/null; then
    [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
taken=" "
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 30000 ))
    [[ "$taken" == *" $p "* ]] && continue
    port_in_use "$p" && continue
    taken+="$p "
    echo "$p"; return 0
  done
  die "no free port found"
}
ETCD_PORT="${ETCD_PORT:-$(free_port)}"; taken+="$ETCD_PORT "
ETCD_PEER_PORT="$(free_port)"; taken+="$ETCD_PEER_PORT "
SECURE_PORT="${SECURE_PORT:-$(free_port)}"; taken+="$SECURE_PORT "

# --- certificates, keys, token ------------------------------------------------
PKI="$OUT/pki"
mkdir -p "$PKI"
(
  cd "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 365 \
    -keyout ca.key -out ca.crt -subj "/CN=capstan-bench-upstream-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -sha256 -keyout serving.key -out serving.csr \
    -subj "/CN=kube-apiserver" 2>/dev/null
  cat > serving.ext <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOF
  openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
    -sha256 -days 365 -extfile serving.ext -out serving.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  chmod 600 ca.key serving.key sa.key
)
TOKEN="$(openssl rand -hex 32)"
# token,user,uid,"group1,group2"
printf '%s,admin,admin-uid,"system:masters"\n' "$TOKEN" > "$PKI/tokens.csv"
chmod 600 "$PKI/tokens.csv"

KUBECONFIG_FILE="$OUT/upstream.kubeconfig"
cat > "$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: upstream
  cluster:
    server: https://127.0.0.1:$SECURE_PORT
    certificate-authority-data: $(base64 -w0 < "$PKI/ca.crt")
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: upstream
  context:
    cluster: upstream
    user: admin
current-context: upstream
EOF
chmod 600 "$KUBECONFIG_FILE"

# --- etcd -----------------------------------------------------------------------
if [[ -n "${USE_ETCD:-}" ]]; then
  ETCD_URL="$USE_ETCD"
  ETCD_PID=""
  echo "ETCD_PID=" > "$OUT/pids"
  trap 'log "start failed; logs in $OUT (kube-apiserver.log)"; [[ -n "${APISERVER_PID:-}" ]] && kill "$APISERVER_PID" 2>/dev/null || true' ERR
  # A cluster is given as a comma-separated list: its first member is asked.
  curl -fsS --max-time 2 "${ETCD_URL%%,*}/health" 2>/dev/null | grep -q '"health":"true"' || die "etcd at $ETCD_URL is not healthy"
else
  ETCD_URL="http://127.0.0.1:$ETCD_PORT"
  PEER_URL="http://127.0.0.1:$ETCD_PEER_PORT"
  # shellcheck disable=SC2086
  nohup nice -n "$NICE" "$BIN/etcd" \
    --name upstream-bench \
    --data-dir "$OUT/etcd-data" \
    --listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
    --listen-peer-urls "$PEER_URL" --initial-advertise-peer-urls "$PEER_URL" \
    --initial-cluster "upstream-bench=$PEER_URL" --initial-cluster-state new \
    --log-level warn \
    ${ETCD_ARGS:-} \
    > "$OUT/etcd.log" 2>&1 < /dev/null &
  ETCD_PID=$!
  echo "ETCD_PID=$ETCD_PID" > "$OUT/pids"

  cleanup_on_error() {
    log "start failed; logs in $OUT (etcd.log, kube-apiserver.log)"
    [[ -n "${APISERVER_PID:-}" ]] && kill "$APISERVER_PID" 2>/dev/null || true
    kill "$ETCD_PID" 2>/dev/null || true
  }
  trap cleanup_on_error ERR

  for i in $(seq 1 60); do
    curl -fsS --max-time 2 "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"' && break
    kill -0 "$ETCD_PID" 2>/dev/null || { tail -20 "$OUT/etcd.log" >&2; false; }
    [[ $i == 60 ]] && { log "etcd not healthy after 30s"; false; }
    sleep 0.5
  done
  log "etcd healthy at $ETCD_URL (pid $ETCD_PID)"
fi

# --- kube-apiserver -------------------------------------------------------------
# --advertise-address is loopback, so the kubernetes Endpoints cannot be written
# (validation rejects loopback IPs): disable that reconciler, as upstream's own
# test server does. --service-cluster-ip-range is only an allocation range.
# shellcheck disable=SC2086
nohup nice -n "$NICE" "$BIN/kube-apiserver" \
  --bind-address=127.0.0.1 \
  --advertise-address=127.0.0.1 \
  --secure-port="$SECURE_PORT" \
  --tls-cert-file="$PKI/serving.crt" \
  --tls-private-key-file="$PKI/serving.key" \
  --client-ca-file="$PKI/ca.crt" \
  --cert-dir="$OUT/cert-dir" \
  --etcd-servers="$ETCD_URL" \
  --etcd-prefix="$ETCD_PREFIX" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" \
  --service-account-signing-key-file="$PKI/sa.key" \
  --token-auth-file="$PKI/tokens.csv" \
  --authorization-mode="$AUTHZ" \
  --enable-priority-and-fairness="$APF" \
  --service-cluster-ip-range=10.0.0.0/16 \
  --endpoint-reconciler-type=none \
  ${APISERVER_ARGS:-} \
  > "$OUT/kube-apiserver.log" 2>&1 < /dev/null &
APISERVER_PID=$!
echo "APISERVER_PID=$APISERVER_PID" >> "$OUT/pids"

start=$(date +%s)
while :; do
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$PKI/ca.crt" \
    -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$SECURE_PORT/readyz" 2>/dev/null || true)
  [[ "$code" == 200 ]] && break
  kill -0 "$APISERVER_PID" 2>/dev/null || { tail -30 "$OUT/kube-apiserver.log" >&2; false; }
  (( $(date +%s) - start > READY_TIMEOUT )) && { log "kube-apiserver not ready after ${READY_TIMEOUT}s (last code $code)"; false; }
  sleep 1
done
trap - ERR
log "kube-apiserver ready after $(( $(date +%s) - start ))s"

cat > "$OUT/env" <<EOF
OUT=$OUT
KUBECONFIG=$KUBECONFIG_FILE
SERVER=https://127.0.0.1:$SECURE_PORT
SECURE_PORT=$SECURE_PORT
CA=$PKI/ca.crt
TOKEN=$TOKEN
ETCD_URL=$ETCD_URL
ETCD_PREFIX=$ETCD_PREFIX
ETCD_PID=$ETCD_PID
APISERVER_PID=$APISERVER_PID
EOF

echo "KUBECONFIG=$KUBECONFIG_FILE"
echo "SERVER=https://127.0.0.1:$SECURE_PORT"
echo "ETCD_URL=$ETCD_URL"
echo "ETCD_PID=$ETCD_PID"
echo "APISERVER_PID=$APISERVER_PID"
echo "ENV=$OUT/env"
