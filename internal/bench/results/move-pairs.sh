#!/bin/bash
# pairs.sh A B PAIRS REGEX: runs the internal/bench benchmarks REGEX selects from test binaries
# A and B alternately (A first in odd pairs, B first in even ones), PAIRS pairs, one op each
# (-test.benchtime 1x), printing each benchmark line prefixed with its side's label.
set -euo pipefail
a=$1; b=$2; pairs=$3; regex=$4
run() { "$1" -test.run '^$' -test.bench "$regex" -test.benchtime 1x -test.count 1 2>/dev/null | grep '^Benchmark' | sed "s|^|$2 |"; }
for i in $(seq 1 "$pairs"); do
  if (( i % 2 )); then run "$a" A; run "$b" B; else run "$b" B; run "$a" A; fi
done
