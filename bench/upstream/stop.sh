#!/usr/bin/env bash
# Stop the kube-apiserver and etcd started by run.sh.
#   ./stop.sh [OUT]   OUT defaults to the last run's dir (bench/upstream/.last-out)
# Kills only the two PIDs recorded in $OUT/env (apiserver first, then etcd),
# then removes $OUT unless KEEP=1.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-${OUT:-$(cat "$HERE/.last-out" 2>/dev/null || true)}}"
[[ -n "$OUT" && -d "$OUT" ]] || { echo "stop.sh: no run dir (pass OUT)" >&2; exit 1; }

pids_file="$OUT/pids"
[[ -f "$pids_file" ]] || { echo "stop.sh: $pids_file missing" >&2; exit 1; }
# shellcheck disable=SC1090
source "$pids_file"

stop_pid() { # name pid
  local name=$1 pid=$2
  [[ -n "$pid" ]] || return 0
  if ! kill -0 "$pid" 2>/dev/null; then echo "stop.sh: $name ($pid) not running"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { echo "stop.sh: stopped $name ($pid)"; return 0; }
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  echo "stop.sh: killed $name ($pid) after 20s"
}
stop_pid kube-apiserver "${APISERVER_PID:-}"
stop_pid etcd "${ETCD_PID:-}"

if [[ "${KEEP:-0}" == 1 ]]; then
  rm -f "$OUT/env"
  echo "stop.sh: kept $OUT"
else
  rm -rf "$OUT"
  echo "stop.sh: removed $OUT"
fi
if [[ "$(cat "$HERE/.last-out" 2>/dev/null || true)" == "$OUT" ]]; then rm -f "$HERE/.last-out"; fi
