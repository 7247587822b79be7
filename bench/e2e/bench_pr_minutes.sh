#!/usr/bin/env bash
# CI time of one pull request job of a small CMake project, before and after
# --baseline-source server (issue 33, item 2's figure; docs/performance.md).
#
#   before: configure and build the base, configure and build the head,
#           perfgate run --backend callgrind measuring both sides;
#   after:  configure and build the head, perfgate run --backend callgrind
#           --baseline-source server (the base's run was stored by the push
#           that put it on main, which is not part of the PR's job).
#
# The project is examples/checksum.cpp as a stand-alone CMake project (one
# target, -O2 -g, Release), base and head differing by one constant; every
# build starts from an empty build directory (no ccache), as a CI job does.
# A server on 127.0.0.1 with a fresh SQLite file holds the runs.
#
# UNITS (default 0) adds that many generated translation units of ordinary
# templated C++ (<map>, <string>, <algorithm>, <regex>) to the target, for a
# project whose build weighs more than the benchmark.
#
# Usage: bench/e2e/bench_pr_minutes.sh PERFGATE [RUNS] [UNITS]
#   e.g. bench/e2e/bench_pr_minutes.sh build/dev/bin/perfgate 5 40
# Prints a markdown table: the median of RUNS jobs of each kind and their parts, in seconds.
set -euo pipefail
perfgate=$(realpath "$1"); runs=${2:-5}; units=${3:-0}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

base_sha=1111111111111111111111111111111111111111
head_sha=2222222222222222222222222222222222222222
parent_sha=0000000000000000000000000000000000000001

make_project() {
  mkdir -p "$1"
  cp "$src/examples/checksum.cpp" "$1/"
  local sources="checksum.cpp"
  for u in $(seq "$units"); do
    cat > "$1/unit$u.cpp" <<EOF
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>
std::map<std::string, std::vector<int>> unit${u}(const std::string& text)
{
    std::map<std::string, std::vector<int>> out;
    const std::regex word("[a-z]+");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
        out[it->str()].push_back(static_cast<int>(it->position()));
    for (auto& [k, v] : out) std::sort(v.begin(), v.end());
    return out;
}
EOF
    sources="$sources unit$u.cpp"
  done
  cat > "$1/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(checksum CXX)
add_executable(bench $sources)
target_compile_options(bench PRIVATE -O2 -g)
EOF
}
make_project "$work/base"
make_project "$work/head"
sed -i 's/sum \* 31 + v/sum * 33 + v/' "$work/head/checksum.cpp" # the PR's change

now() { date +%s.%N; }
build() { # a clean configure and build, as a CI job does
  rm -rf "$1/build"
  CCACHE_DISABLE=1 cmake -S "$1" -B "$1/build" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$1/build" -j2 > /dev/null
}

db="$work/perfgate.db"
token=$("$perfgate" token create --db "$db" --project demo)
"$perfgate" serve --db "$db" --listen 127.0.0.1:0 > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/serve.out" 2> /dev/null && break; sleep 0.1; done
url=$(sed -n 's/^perfgate: listening on //p' "$work/serve.out")
[ -n "$url" ] || { echo "the server did not start" >&2; cat "$work/serve.err" >&2; exit 1; }

gate() { # perfgate run ARGS...: one PR gate against the server
  PERFGATE_TOKEN=$token "$perfgate" run -q --backend callgrind --server "$url" --project demo --testbed bench \
    --format json --output "$work/report.json" "$@" > /dev/null 2> "$work/run.err" || [ $? -eq 1 ] ||
    { cat "$work/run.err" >&2; return 1; }
}

# The push that put the base on main: its run of the base commit is stored
# (not timed: it is the push job's, once for every PR forked there).
build "$work/base"
gate --sha "$base_sha" --branch main --base-sha "$parent_sha" --base-branch main \
  --baseline "$work/base/build/bench" --candidate "$work/base/build/bench"

declare -a before before_builds before_measure after after_build after_measure
for i in $(seq "$runs"); do
  t0=$(now); build "$work/base"; build "$work/head"; t1=$(now)
  gate --sha "$head_sha" --branch feature --base-sha "$base_sha" --base-branch main --baseline-source measure \
    --baseline "$work/base/build/bench" --candidate "$work/head/build/bench"
  t2=$(now)
  before+=("$(echo "$t2 - $t0" | bc)"); before_builds+=("$(echo "$t1 - $t0" | bc)")
  before_measure+=("$(echo "$t2 - $t1" | bc)")

  rm -rf "$work/base/build" # the after job has no base build at all
  t0=$(now); build "$work/head"; t1=$(now)
  gate --sha "$head_sha" --branch feature --base-sha "$base_sha" --base-branch main --baseline-source server \
    --baseline "$work/base/build/bench" --candidate "$work/head/build/bench"
  t2=$(now)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get("baseline_reused") else 1)' \
    "$work/report.json" || { echo "run $i: the baseline was not reused" >&2; exit 1; }
  after+=("$(echo "$t2 - $t0" | bc)"); after_build+=("$(echo "$t1 - $t0" | bc)")
  after_measure+=("$(echo "$t2 - $t1" | bc)")
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }
echo "| PR job ($runs runs, median s; $((units + 1)) translation units) | builds | perfgate run | total |"
echo "|---|---|---|---|"
echo "| before: build base + head, measure both | $(median "${before_builds[@]}") | $(median "${before_measure[@]}") | $(median "${before[@]}") |"
echo "| after: build head, baseline reused | $(median "${after_build[@]}") | $(median "${after_measure[@]}") | $(median "${after[@]}") |"
