#!/usr/bin/env bash
# Runs every Go fuzz target of capstan for FUZZTIME each (default 10m), one
# after the other, at nice 19, with one fuzzing worker: the seeds alone run in
# every `go test`. A crash leaves its input under the package's
# testdata/fuzz/<Target>/, where it becomes a regression seed once fixed.
#
#   hack/fuzz.sh                      all targets, 10 minutes each
#   FUZZTIME=30s hack/fuzz.sh         a quick pass
#   hack/fuzz.sh FuzzParse FuzzPatch  only these targets
#
# The summary (target, time, result) goes to stdout and to
# ${FUZZLOG:-/tmp/capstan-fuzz}/summary.txt, each target's output beside it
# (<Target>.<package>.log).
set -u
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10m}
logdir=${FUZZLOG:-/tmp/capstan-fuzz}
mkdir -p "$logdir"

# package target, one a line.
targets=$(
	grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
		pkg=./$(dirname "${file#./}")
		grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed "s|^func |$pkg |"
	done
)

status=0
while read -r pkg target; do
	[ -n "$target" ] || continue
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$target"; then
		continue
	fi
	# Targets of one name in several packages (FuzzConfig, FuzzLoad) get a log each.
	log="$logdir/$target.$(echo "${pkg#./}" | tr / _).log"
	start=$(date +%s)
	if nice -n 19 go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -parallel 1 "$pkg" >"$log" 2>&1; then
		result=pass
	else
		result=FAIL
		status=1
	fi
	# The last progress line: how long the fuzzer itself ran (the
	# instrumented build before it can take minutes) and its executions.
	last=$(grep '^fuzz: elapsed:' "$log" | tail -1)
	fuzzed=$(echo "$last" | sed -n 's/^fuzz: elapsed: \([^,]*\),.*/\1/p')
	execs=$(echo "$last" | sed -n 's/.*execs: \([0-9]*\).*/\1/p')
	line=$(printf '%-26s %-30s fuzzed %-7s total %5ss %-4s execs %s' "$target" "$pkg" "${fuzzed:-0s}" \
		"$(($(date +%s) - start))" "$result" "${execs:-0}")
	echo "$line" | tee -a "$logdir/summary.txt"
done <<<"$targets"
exit $status
