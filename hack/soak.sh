#!/usr/bin/env bash
# The soak: capstan (embedded etcd) under the load tool's mixed workload
# (crud, list, watch and informer, run again and again) for SOAKTIME
# (default 30m), with the server's RSS, goroutines and open file
# descriptors sampled every SAMPLE seconds (default 30). Flat after the
# warm-up is the pass mark: a leak of watches, connections or informers
# shows as a line that keeps climbing.
#
#   hack/soak.sh                       # builds ./cmd/capstan and ./cmd/capstan-load
#   CAPSTAN_BIN=... LOAD_BIN=... SOAKTIME=5m hack/soak.sh
#
# Samples go to $WORK/samples.csv (time,rss_kb,goroutines,fds,heap_inuse_kb:
# the Go heap's in-use spans, which a leak moves and the runtime's lazy
# return of memory does not); the summary (first sample after warm-up,
# last, maximum) to stdout. Heap profiles at the end of the warm-up and at
# the end ($WORK/heap-warm.pb.gz, heap-end.pb.gz) show what grew:
#   go tool pprof -top -base $WORK/heap-warm.pb.gz $CAPSTAN_BIN $WORK/heap-end.pb.gz
set -euo pipefail
cd "$(dirname "$0")/.."
soaktime=${SOAKTIME:-30m}
sample=${SAMPLE:-30}
port=${PORT:-27443}
work=${WORK:-$(mktemp -d /tmp/capstan-soak.XXXXXX)}
mkdir -p "$work"
if [ -z "${CAPSTAN_BIN:-}" ]; then CAPSTAN_BIN=$work/capstan; nice go build -o "$CAPSTAN_BIN" ./cmd/capstan; fi
if [ -z "${LOAD_BIN:-}" ]; then LOAD_BIN=$work/capstan-load; nice go build -o "$LOAD_BIN" ./cmd/capstan-load; fi

sock=$work/debug.sock
nice "$CAPSTAN_BIN" --data-dir "$work/data" --secure-port "$port" --bind-address 127.0.0.1 \
	--debug-socket-path "$sock" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
deadline=$((SECONDS + 120))
until curl -sk "https://127.0.0.1:$port/readyz" | grep -qx ok; do
	[ $SECONDS -lt $deadline ] || { echo "soak: server not ready in 120 s" >&2; exit 1; }
	kill -0 "$server" || { echo "soak: server exited" >&2; exit 1; }
	sleep 1
done

end=$((SECONDS + $(echo "$soaktime" | sed 's/m$/*60/;s/s$//' | bc)))
echo "time,rss_kb,goroutines,fds,heap_inuse_kb" >"$work/samples.csv"
warm=$((SECONDS + ($end - SECONDS) / 5))
(
	while [ $SECONDS -lt $end ] && kill -0 "$server" 2>/dev/null; do
		if [ -n "${warm:-}" ] && [ $SECONDS -ge "$warm" ]; then
			curl -s --unix-socket "$sock" -o "$work/heap-warm.pb.gz" 'http://x/debug/pprof/heap'
			warm=
		fi
		rss=$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")
		fds=$(ls "/proc/$server/fd" | wc -l)
		gor=$(curl -s --unix-socket "$sock" 'http://x/debug/pprof/goroutine?debug=1' | sed -n 's/^goroutine profile: total //p')
		heap=$(curl -s --unix-socket "$sock" 'http://x/debug/pprof/heap?debug=1' | sed -n 's/^# HeapInuse = //p')
		echo "$(date +%s),$rss,$gor,$fds,$((${heap:-0} / 1024))" >>"$work/samples.csv"
		sleep "$sample"
	done
) &
sampler=$!

rounds=0
while [ $SECONDS -lt $end ]; do
	rounds=$((rounds + 1))
	nice "$LOAD_BIN" --kubeconfig "$work/data/admin.kubeconfig" --name "soak-$rounds" \
		--workloads crud,list,watch,informer --crud-n 500 --crud-c 4 --list-n 1000 --list-runs 3 \
		--watch-watchers 20 --watch-writes 100 --informer-n 1000 --informer-runs 1 \
		--timeout 10m >>"$work/load.log" 2>&1 || echo "soak: round $rounds failed (see $work/load.log)" >&2
done
wait "$sampler"
curl -s --unix-socket "$sock" -o "$work/heap-end.pb.gz" 'http://x/debug/pprof/heap'
echo "soak: $rounds rounds of crud,list,watch,informer in $soaktime; samples in $work/samples.csv"
# Warm-up is the first fifth of the samples.
awk -F, 'NR > 1 { n++; t[n] = $1; r[n] = $2; g[n] = $3; f[n] = $4; h[n] = $5 }
END {
	w = int(n / 5) + 1
	maxr = maxg = maxf = maxh = 0
	for (i = w; i <= n; i++) {
		if (r[i] > maxr) maxr = r[i]; if (g[i] > maxg) maxg = g[i]; if (f[i] > maxf) maxf = f[i]; if (h[i] > maxh) maxh = h[i]
	}
	printf "samples %d; after warm-up (sample %d, +%ds): rss_kb %d goroutines %d fds %d heap_inuse_kb %d\n", n, w, t[w] - t[1], r[w], g[w], f[w], h[w]
	printf "last (+%ds): rss_kb %d goroutines %d fds %d heap_inuse_kb %d\n", t[n] - t[1], r[n], g[n], f[n], h[n]
	printf "max after warm-up: rss_kb %d goroutines %d fds %d heap_inuse_kb %d\n", maxr, maxg, maxf, maxh
}' "$work/samples.csv"
