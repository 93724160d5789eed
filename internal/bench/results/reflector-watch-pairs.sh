#!/bin/bash
# pairs.sh A B PAIRS: runs BenchmarkReflectorWatchEvents/kinformer from test binaries A and B
# alternately (A first in odd pairs, B first in even ones), PAIRS pairs, printing each run's
# benchmark line prefixed with the binary's label.
set -euo pipefail
a=$1; b=$2; pairs=$3
run() { "$1" -test.run '^$' -test.bench 'BenchmarkReflectorWatchEvents/kinformer$' -test.benchtime 1000x -test.count 1 | grep '^Benchmark' | sed "s|^|$2 |"; }
for i in $(seq 1 "$pairs"); do
  if (( i % 2 )); then run "$a" A; run "$b" B; else run "$b" B; run "$a" A; fi
done
