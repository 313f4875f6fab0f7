#!/usr/bin/env bash
# The cost of many CRDs: capstan and the upstream kube-apiserver (bench/upstream),
# each started once on a fresh prefix of one etcd, then the crds workload of
# cmd/capstan-load (N CRDs created, waited for until Established and in
# discovery, memory before and after, a first custom resource in some of them).
# Writes the CRD section of docs/benchmarks.md; the rest of the document is
# bench/compare.sh's. Everything listens on 127.0.0.1.
#
#   bench/crds.sh                    # N=1000; 11-20 minutes on 2 cores (9 of them idling before memory readings); runs under nice -n 10
#
# Environment (all optional):
#   CRDS_N CRDS_C CRDS_GROUPS CRDS_FIRST_CRS   workload sizes   (default 1000 8 100 50)
#   CRDS_SETTLE           idle time before each memory reading  (default 90s: more than the
#                         75 s of history both servers' watch caches keep)
#   CRDS_TIMEOUT          how long the CRDs may take to be served (default 60m)
#   SERVERS               which servers to measure: "kube capstan" (default); with only
#                         one the document is not written
#   CAPSTAN_BIN           use this capstan binary instead of building ./cmd/capstan
#   CAPSTAN_DESC          what CAPSTAN_BIN was built from, for the document
#   PROFILES=1            also save each server's heap profiles ($WORK/<server>-heap-*.pb.gz; implies KEEP=1)
#   DOC                   the document to update                (default docs/benchmarks.md)
#   KEEP=1                keep the work dir (JSON reports, server logs, profiles)
#   NICE                  niceness of the whole run              (default 10)
set -euo pipefail

if [[ -z "${CRDS_NICED:-}" ]]; then
  CRDS_NICED=1 exec nice -n "${NICE:-10}" "$0" "$@"
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UP="$ROOT/bench/upstream"
DOC="${DOC:-$ROOT/docs/benchmarks.md}"
SERVERS="${SERVERS:-kube capstan}"
[[ "${PROFILES:-0}" == 1 ]] && KEEP=1
SIZES=(
  --crds-n="${CRDS_N:-1000}" --crds-c="${CRDS_C:-8}" --crds-groups="${CRDS_GROUPS:-100}"
  --crds-first-crs="${CRDS_FIRST_CRS:-50}" --crds-settle="${CRDS_SETTLE:-90s}"
  --crds-timeout="${CRDS_TIMEOUT:-60m}" --timeout=3h --startup-runs=1
)

log() { echo "crds.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/capstan-crds.XXXXXX")"
cleanup() {
  if [[ -f "$WORK/upstream/pids" ]]; then KEEP=1 "$UP/stop.sh" "$WORK/upstream" >/dev/null 2>&1 || true; fi
  if [[ "${KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

port_in_use() {
  if command -v ss >/dev/null; then
    [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 30000 ))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  die "no free port"
}
profile_flag() { # server: the flag that saves its heap profiles, if asked
  if [[ "${PROFILES:-0}" == 1 ]]; then mkdir -p "$WORK/$1-profiles"; echo "--crds-profile-dir=$WORK/$1-profiles"; fi
}

# --- build ---------------------------------------------------------------------
cd "$ROOT"
log "building capstan-load and capstan into $WORK"
go build -o "$WORK/capstan-load" ./cmd/capstan-load
LOAD="$WORK/capstan-load"
if [[ -n "${CAPSTAN_BIN:-}" ]]; then
  CAPSTAN="$CAPSTAN_BIN"
  built_from="${CAPSTAN_DESC:-$CAPSTAN_BIN (CAPSTAN_BIN)}"
else
  built_from="commit $(git -C "$ROOT" rev-parse --short HEAD)"
  [[ -n "$(git -C "$ROOT" status --porcelain -- ':!docs' 2>/dev/null)" ]] && built_from+=" with uncommitted changes"
  go build -o "$WORK/capstan" ./cmd/capstan
  CAPSTAN="$WORK/capstan"
fi
CAPSTAN_FLAGS=(--bind-address=127.0.0.1 --authorization-mode=RBAC)
if [[ ! -x "$UP/bin/kube-apiserver" || ! -x "$UP/bin/etcd" ]]; then
  log "building upstream kube-apiserver and etcd (bench/upstream/build.sh: ~20 minutes cold)"
  "$UP/build.sh"
fi

# --- one etcd, and kube-apiserver's command line, from run.sh --------------------
log "starting etcd and a warm-up kube-apiserver (bench/upstream/run.sh)"
OUT="$WORK/upstream" ETCD_PREFIX=/kube/warmup BUILD=0 "$UP/run.sh" > "$WORK/run.out"
# shellcheck disable=SC1091
source "$WORK/upstream/env"
mapfile -d '' -t KUBE_CMD < "/proc/$APISERVER_PID/cmdline"
kill -TERM "$APISERVER_PID"
for _ in $(seq 1 150); do kill -0 "$APISERVER_PID" 2>/dev/null || break; sleep 0.2; done
kill -0 "$APISERVER_PID" 2>/dev/null && die "warm-up kube-apiserver ($APISERVER_PID) did not stop"
for i in "${!KUBE_CMD[@]}"; do
  case "${KUBE_CMD[$i]}" in --etcd-prefix=*) KUBE_CMD[i]="--etcd-prefix=/kube/{run}" ;; esac
done
# Both servers serve pprof on a unix socket, through which the tool forces a
# garbage collection before it reads the Go heap.
KUBE_CMD+=("--debug-socket-path=$WORK/kube-{run}.sock")
log "etcd $ETCD_URL (pid $ETCD_PID); kube-apiserver: ${KUBE_CMD[*]}"

# etcd_reset deletes every key under $1, compacts and defragments (as compare.sh).
etcd_reset() {
  local key end rev
  key="$(printf '%s' "$1" | base64 -w0)"
  end="$(printf '%s' "${1%/}0" | base64 -w0)"
  rev="$(curl -fsS --max-time 60 -X POST "$ETCD_URL/v3/kv/deleterange" -d "{\"key\":\"$key\",\"range_end\":\"$end\"}" |
    sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')"
  [[ -n "$rev" ]] || die "etcd deleterange under $1 failed"
  curl -fsS --max-time 60 -X POST "$ETCD_URL/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null ||
    log "compaction at $rev failed (already compacted?)"
  curl -fsS --max-time 120 -X POST "$ETCD_URL/v3/maintenance/defragment" -d '{}' >/dev/null || die "defragment failed"
  log "etcd: deleted $1*, compacted at $rev, defragmented"
}
etcd_reset /kube/

# --- kube-apiserver --------------------------------------------------------------
if [[ " $SERVERS " == *" kube "* ]]; then
  log "kube-apiserver: crds ${SIZES[*]}"
  # shellcheck disable=SC2046
  "$LOAD" --name kube-apiserver --workloads=startup,crds "${SIZES[@]}" $(profile_flag kube) \
    --kubeconfig="$KUBECONFIG" --ready-url="$SERVER/readyz" --etcd-pid="$ETCD_PID" \
    --debug-socket="$WORK/kube-{run}.sock" --server-log="$WORK/kube-{run}.log" --json="$WORK/kube.json" \
    -- "${KUBE_CMD[@]}" | tee "$WORK/kube.txt" || log "capstan-load reported failures for kube-apiserver (the document shows them)"
  etcd_reset /kube/
fi

# --- capstan on the same etcd ----------------------------------------------------
if [[ " $SERVERS " == *" capstan "* ]]; then
  port="$(free_port)"
  log "capstan (etcd $ETCD_URL): crds ${SIZES[*]}"
  # shellcheck disable=SC2046
  "$LOAD" --name capstan --workloads=startup,crds "${SIZES[@]}" $(profile_flag capstan) \
    --kubeconfig="$WORK/capstan-{run}/admin.kubeconfig" --ready-url="https://127.0.0.1:$port/readyz" \
    --etcd-pid="$ETCD_PID" --debug-socket="$WORK/capstan-{run}.sock" \
    --server-log="$WORK/capstan-{run}.log" --json="$WORK/capstan.json" \
    -- "$CAPSTAN" "${CAPSTAN_FLAGS[@]}" --secure-port="$port" --data-dir="$WORK/capstan-{run}" \
    --etcd-servers="$ETCD_URL" --etcd-prefix="/capstan/{run}" --debug-socket-path="$WORK/capstan-{run}.sock" |
    tee "$WORK/capstan.txt" || log "capstan-load reported failures for capstan (the document shows them)"
  etcd_reset /capstan/
fi
"$UP/stop.sh" "$WORK/upstream" >/dev/null

# --- the document ----------------------------------------------------------------
if [[ ! -f "$WORK/kube.json" || ! -f "$WORK/capstan.json" ]]; then
  log "not both servers measured: $DOC is not written (the JSON reports are in $WORK with KEEP=1)"
  exit 0
fi
kube_go="$(go version "$UP/bin/kube-apiserver" | awk '{print $2}')"
capstan_go="$(go version "$CAPSTAN" | awk '{print $2}')"
"$LOAD" report-crds --kube="$WORK/kube.json" --capstan="$WORK/capstan.json" --markdown="$DOC" --command="bench/crds.sh" \
  --note="capstan=$built_from, built by $capstan_go, flags: ${CAPSTAN_FLAGS[*]}" \
  --note="kube-apiserver=v1.37.2 from bench/upstream, built by $kube_go, flags as bench/upstream/run.sh sets them, and --debug-socket-path" \
  --note="etcd=v3.7.3, one process for both servers (fsync on), a fresh --etcd-prefix per server"
log "updated the CRD section of $DOC"
