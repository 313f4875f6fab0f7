#!/usr/bin/env bash
# Compare capstan with the upstream kube-apiserver (bench/upstream) on one
# etcd, with the same workloads (cmd/capstan-load), and write
# docs/benchmarks.md and docs/benchmarks.png. Everything listens on 127.0.0.1.
# The document's section on 1,000 CRDs is bench/crds.sh's; this keeps it.
#
#   bench/compare.sh                 # ~10 minutes on 2 cores; runs itself under nice -n 10
#   BIG=1 bench/compare.sh           # also RSS with 100,000 config maps and 10
#                                    # concurrent lists of them (slow)
#
# Environment (all optional):
#   ROUNDS=3              run kube-apiserver and capstan alternately this many times;
#                         the document shows each figure's median  (default 1)
#   CONTENT_TYPE=json     the clients' wire format                  (default protobuf)
#   BIG=1                 fill to 100,000 config maps as well as 10,000
#   WORKLOADS             run only these of the load tool's workloads (comma-separated;
#                         default all), e.g. WORKLOADS=fill FILL=100000 FILL_LISTS=10 DOC=/tmp/big.md
#   SKIP_UPSTREAM_BUILD=1 if bench/upstream/bin is missing, do not build it (a cold
#                         build takes ~20 minutes): measure embedded capstan only and
#                         print the table, without writing the document
#   CAPSTAN_BIN           use this capstan binary instead of building ./cmd/capstan
#   CAPSTAN_DESC          what CAPSTAN_BIN was built from, for the document
#   DOC                   the document to write            (default docs/benchmarks.md)
#   KEEP=1                keep the work dir (JSON reports, server logs, data)
#   NICE                  niceness of the whole run          (default 10)
#   STARTUP_RUNS CRUD_N CRUD_C READS_N READS_C READS_D LIST_N WATCH_W WATCH_M
#   HOLD_W HOLD_M INFORMER_N IDLE FILL FILL_LISTS
#                         workload sizes (defaults below)
set -euo pipefail

if [[ -z "${COMPARE_NICED:-}" ]]; then
  COMPARE_NICED=1 exec nice -n "${NICE:-10}" "$0" "$@"
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UP="$ROOT/bench/upstream"
DOC="${DOC:-$ROOT/docs/benchmarks.md}"
STARTUP_RUNS="${STARTUP_RUNS:-3}"
ROUNDS="${ROUNDS:-1}"
CONTENT_TYPE="${CONTENT_TYPE:-protobuf}"
FILL="${FILL:-10000}"
if [[ "${BIG:-0}" == 1 ]]; then FILL="${FILL},100000"; FILL_LISTS="${FILL_LISTS:-10}"; fi
FILL_LISTS="${FILL_LISTS:-0}"
SIZES=(
  --crud-n="${CRUD_N:-2000}" --crud-c="${CRUD_C:-8}" --fill-lists="$FILL_LISTS"
  --reads-n="${READS_N:-100}" --reads-c="${READS_C:-16}" --reads-duration="${READS_D:-10s}"
  --list-n="${LIST_N:-5000}" --list-runs=10 --list-page=500
  --watch-watchers="${WATCH_W:-1000}" --watch-writes="${WATCH_M:-1000}"
  --watchers-n="${HOLD_W:-10000}" --watchers-writes="${HOLD_M:-10}"
  --informer-n="${INFORMER_N:-5000}" --informer-runs=3
  --idle="${IDLE:-10s}" --fill="$FILL" --timeout=60m --content-type="$CONTENT_TYPE"
)
ALL="${WORKLOADS:-startup,idle,fill,crud,reads,list,watch,watchers,informer,admission}"

log() { echo "compare.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/capstan-compare.XXXXXX")"
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
# Authorize like kube (RBAC; the tool's user is in system:masters).
CAPSTAN_FLAGS=(--bind-address=127.0.0.1 --authorization-mode=RBAC)

run_embedded() { # workloads json [name]: capstan with its embedded etcd, in fresh data dirs name-{run}
  local port; port="$(free_port)"
  local dir="$WORK/${3:-embedded}"
  "$LOAD" --name capstan-embedded --workloads="$1" --startup-runs="$STARTUP_RUNS" "${SIZES[@]}" \
    --kubeconfig="$dir-{run}/admin.kubeconfig" --ready-url="https://127.0.0.1:$port/readyz" \
    --server-log="$dir-{run}.log" --json="$2" \
    -- "$CAPSTAN" "${CAPSTAN_FLAGS[@]}" --secure-port="$port" --data-dir="$dir-{run}"
}

if [[ ! -x "$UP/bin/kube-apiserver" || ! -x "$UP/bin/etcd" ]]; then
  if [[ "${SKIP_UPSTREAM_BUILD:-0}" == 1 ]]; then
    log "bench/upstream/bin is not built and SKIP_UPSTREAM_BUILD=1: no kube-apiserver and no etcd,"
    log "so only embedded capstan is measured and $DOC is NOT written. Build with bench/upstream/build.sh (~20 min)."
    run_embedded "$ALL" "$WORK/embedded.json"
    exit 0
  fi
  log "building upstream kube-apiserver and etcd (bench/upstream/build.sh: ~20 minutes cold)"
  "$UP/build.sh"
fi

# --- one etcd (and the certificates and token kube uses), from run.sh ------------
# run.sh starts etcd and a first kube-apiserver; that one only warms the page
# cache and shows the exact command line, which is reused with a fresh prefix.
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
log "etcd $ETCD_URL (pid $ETCD_PID); kube-apiserver: ${KUBE_CMD[*]}"

# etcd_reset deletes every key under $1, compacts and defragments, through
# etcd's JSON gateway, so that the next server starts on an etcd as small as
# it can be made without restarting it.
etcd_reset() {
  local key end rev
  key="$(printf '%s' "$1" | base64 -w0)"
  end="$(printf '%s' "${1%/}0" | base64 -w0)"   # the prefix's range end: "/x/" -> "/x0"
  rev="$(curl -fsS --max-time 60 -X POST "$ETCD_URL/v3/kv/deleterange" -d "{\"key\":\"$key\",\"range_end\":\"$end\"}" |
    sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')"
  [[ -n "$rev" ]] || die "etcd deleterange under $1 failed"
  curl -fsS --max-time 60 -X POST "$ETCD_URL/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null ||
    log "compaction at $rev failed (already compacted?)"
  curl -fsS --max-time 120 -X POST "$ETCD_URL/v3/maintenance/defragment" -d '{}' >/dev/null || die "defragment failed"
  log "etcd: deleted $1*, compacted at $rev, defragmented"
}

# --- the rounds: kube-apiserver, then capstan on the same etcd, then embedded capstan ---
# Both servers serve pprof on a unix socket, through which the watchers
# workload forces a collection before it reads memory, and reads the Go heap.
KUBE_CMD+=("--debug-socket-path=$WORK/kube-{run}.sock")
KUBE_JSON=() CAPSTAN_JSON=() EMBEDDED_JSON=()
for round in $(seq 1 "$ROUNDS"); do
  log "round $round of $ROUNDS: kube-apiserver: $STARTUP_RUNS starts, then $ALL"
  "$LOAD" --name kube-apiserver --workloads="$ALL" --startup-runs="$STARTUP_RUNS" "${SIZES[@]}" \
    --kubeconfig="$KUBECONFIG" --ready-url="$SERVER/readyz" --etcd-pid="$ETCD_PID" \
    --debug-socket="$WORK/kube-{run}.sock" \
    --server-log="$WORK/kube-$round-{run}.log" --json="$WORK/kube-$round.json" \
    -- "${KUBE_CMD[@]}" | tee "$WORK/kube-$round.txt" || log "capstan-load reported failures for kube-apiserver (the document shows them)"
  KUBE_JSON+=("$WORK/kube-$round.json")
  etcd_reset /kube/

  port="$(free_port)"
  log "round $round of $ROUNDS: capstan (etcd $ETCD_URL): $STARTUP_RUNS starts, then $ALL"
  "$LOAD" --name capstan --workloads="$ALL" --startup-runs="$STARTUP_RUNS" "${SIZES[@]}" \
    --kubeconfig="$WORK/capstan-$round-{run}/admin.kubeconfig" --ready-url="https://127.0.0.1:$port/readyz" \
    --etcd-pid="$ETCD_PID" --server-log="$WORK/capstan-$round-{run}.log" --json="$WORK/capstan-$round.json" \
    --debug-socket="$WORK/capstan-{run}.sock" \
    -- "$CAPSTAN" "${CAPSTAN_FLAGS[@]}" --secure-port="$port" --data-dir="$WORK/capstan-$round-{run}" \
    --etcd-servers="$ETCD_URL" --etcd-prefix="/capstan/{run}" --debug-socket-path="$WORK/capstan-{run}.sock" | tee "$WORK/capstan-$round.txt" ||
    log "capstan-load reported failures for capstan (the document shows them)"
  CAPSTAN_JSON+=("$WORK/capstan-$round.json")
  etcd_reset /capstan/
done
"$UP/stop.sh" "$WORK/upstream" >/dev/null

# capstan with its embedded etcd: start and idle, as users run it
for round in $(seq 1 "$ROUNDS"); do
  log "round $round of $ROUNDS: capstan embedded: $STARTUP_RUNS starts, then idle"
  run_embedded startup,idle "$WORK/embedded-$round.json" "embedded-$round" | tee "$WORK/embedded-$round.txt" ||
    log "capstan-load reported failures for embedded capstan (the document shows them)"
  EMBEDDED_JSON+=("$WORK/embedded-$round.json")
done

# --- the document ----------------------------------------------------------------
kube_go="$(go version "$UP/bin/kube-apiserver" | awk '{print $2}')"
capstan_go="$(go version "$CAPSTAN" | awk '{print $2}')"
mkdir -p "$(dirname "$DOC")"
command="bench/compare.sh"
[[ "${BIG:-0}" == 1 ]] && command="BIG=1 $command"
[[ "${BIG:-0}" != 1 && "$FILL" != 10000 ]] && command="FILL=$FILL $command"
[[ "${BIG:-0}" != 1 && "$FILL_LISTS" != 0 ]] && command="FILL_LISTS=$FILL_LISTS $command"
[[ -n "${WORKLOADS:-}" ]] && command="WORKLOADS=$WORKLOADS $command"
[[ "$ROUNDS" != 1 ]] && command="ROUNDS=$ROUNDS $command"
[[ "$CONTENT_TYPE" != protobuf ]] && command="CONTENT_TYPE=$CONTENT_TYPE $command"
join() { local IFS=,; echo "$*"; }
"$LOAD" report --kube="$(join "${KUBE_JSON[@]}")" --capstan="$(join "${CAPSTAN_JSON[@]}")" --embedded="$(join "${EMBEDDED_JSON[@]}")" \
  --markdown="$DOC" --png="${DOC%.md}.png" --command="$command" \
  --note="capstan=$built_from, built by $capstan_go, flags: ${CAPSTAN_FLAGS[*]}" \
  --note="kube-apiserver=v1.37.2 from bench/upstream, built by $kube_go, flags as bench/upstream/run.sh sets them, and --debug-socket-path" \
  --note="etcd=v3.7.3, one process for both servers (fsync on), a fresh --etcd-prefix per start"
log "wrote $DOC and ${DOC%.md}.png"
