#!/usr/bin/env bash
# Checks that two perfgate binaries write the same reports: `perfgate compare`
# on every ordered pair of the captures in examples/data/ and tests/data/perf-stat/
# (error cases included), in text, json and markdown; stdout, stderr and the
# exit code must be byte-identical. For refactors that must not change output.
# Usage: ci/same_reports.sh OLD_PERFGATE NEW_PERFGATE [OUTDIR]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck disable=SC2034 # old and new are read through ${!side}
old=$(realpath "$1") new=$(realpath "$2") out="${3:-$(mktemp -d)}"; mkdir -p "$out/old" "$out/new"
files=$(ls "$root"/examples/data/*.csv "$root"/tests/data/perf-stat/*.{csv,json,txt} 2>/dev/null | sort -u)
n=0; d=0
for b in $files; do for c in $files; do for f in text json markdown; do
  key=$(echo "$(basename $b)-$(basename $c)-$f" | tr '/' '_')
  for side in old new; do bin=${!side}
    (cd "$out" && "$bin" compare --baseline "$b" --candidate "$c" --format $f > "$out/$side/$key.out" 2>&1; echo "exit $?" >> "$out/$side/$key.out")
  done
  n=$((n+1)); cmp -s "$out/old/$key.out" "$out/new/$key.out" || { d=$((d+1)); echo "DIFF $key"; }
done; done; done
echo "outputs compared: $n, different: $d"
[ "$d" = 0 ]
