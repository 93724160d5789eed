#!/bin/bash
# compare.sh OUT REPS COMMIT...: builds syncprobe (this folder, as it is in the work tree) at each
# COMMIT, and at HEAD for the client-go side, then runs REPS reps: in each, for 50,000 and 10,000
# prebuilt pods, client-go and kinformer at every COMMIT, one process each, the order rotating from
# rep to rep; then, with the list built inside ListFunc (-list in-listfunc), 50,000 pods on
# client-go and on kinformer at HEAD, 5 reps alternating. Writes every run's line, prefixed with
# rep=N run=LABEL, to OUT, then syncprobe -summarize's table. Run on an idle machine.
set -euo pipefail
out=$1; reps=$2; shift 2
commits=("$@")
root=$(git rev-parse --show-toplevel)
here=$root/internal/bench/cmd/syncprobe
tmp=$(mktemp -d)
trap 'for w in "$tmp"/wt-*; do [ -d "$w" ] && git -C "$root" worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT
head=$(git -C "$root" rev-parse --short HEAD)
build() { # build COMMIT: the tool at COMMIT into $tmp/probe-COMMIT
	local wt=$tmp/wt-$1
	git -C "$root" worktree add -q --detach "$wt" "$1"
	mkdir -p "$wt/internal/bench/cmd/syncprobe"
	cp "$here"/*.go "$wt/internal/bench/cmd/syncprobe/"
	(cd "$wt" && go build -o "$tmp/probe-$1" ./internal/bench/cmd/syncprobe)
}
for c in "${commits[@]}" "$head"; do [ -x "$tmp/probe-$c" ] || build "$c"; done
load() { cut -d' ' -f1-3 /proc/loadavg; }
{
	echo "# tool: internal/bench/cmd/syncprobe at $head (built at each commit below with this version of its folder); command: internal/bench/cmd/syncprobe/compare.sh OUT $reps ${commits[*]}"
	echo "# started: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load: $(load); $(nproc) CPUs; $(go version | cut -d' ' -f3-)"
} > "$out"
labels=(client-go "${commits[@]}")
for rep in $(seq 1 "$reps"); do
	for pods in 50000 10000; do
		n=${#labels[@]}
		for i in $(seq 0 $((n - 1))); do
			l=${labels[$(((i + rep - 1) % n))]}
			if [ "$l" = client-go ]; then
				line=$("$tmp/probe-$head" -side client-go -pods "$pods")
			else
				line=$("$tmp/probe-$l" -side kinformer -pods "$pods")
				l=kinformer@$l
			fi
			echo "rep=$rep run=$l $line" | tee -a "$out"
		done
	done
done
for rep in $(seq 1 5); do
	sides=(client-go kinformer)
	if (( rep % 2 == 0 )); then sides=(kinformer client-go); fi
	for s in "${sides[@]}"; do
		line=$("$tmp/probe-$head" -side "$s" -pods 50000 -list in-listfunc)
		echo "rep=$rep run=$s@$head $line" | tee -a "$out"
	done
done
echo "# ended: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load: $(load)" >> "$out"
echo >> "$out"
"$tmp/probe-$head" -summarize < "$out" | tee -a "$out"
