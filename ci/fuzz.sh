#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, ASan + UBSan) and runs
# each for a bounded time from its seeds; fails when a target finds a crash,
# a sanitizer report, a leak, an input slower than FUZZ_TIMEOUT seconds or one
# that needs more than 2 GB. Only the fuzz targets (and the libraries they
# link) are built. Long runs, and how to replay a crash: tests/fuzz/README.md.
#
# Usage: ci/fuzz.sh [build-dir]   (default build-fuzz; an existing build
#   configured with -DPERFGATE_FUZZ=ON, like CI's ASan build, is reused)
#   FUZZ_SECONDS  per target (default 60); targets run $(nproc) at a time
#   FUZZ_TIMEOUT  per input (default 10)
#   FUZZ_TARGETS  space-separated subset (default: all)
# A failing target's log is printed; its crashing input stays in
# BUILD/fuzz-artifacts/ (libFuzzer's crash-*/leak-*/timeout-*/oom-* files).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="${1:-build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
per_input="${FUZZ_TIMEOUT:-10}"
jobs="$(nproc)"

# Each target and its seeds (read only: new inputs go to a scratch corpus).
declare -A seeds=(
  [fuzz_perf_csv]=tests/fuzz/corpus
  [fuzz_request]=tests/fuzz/corpus-request
  [fuzz_json_inputs]=tests/fuzz/corpus-json
  [fuzz_callgrind]=tests/data/callgrind
  [fuzz_perf_script]=tests/data/perf-script
  [fuzz_harness_inputs]=tests/fuzz/corpus-harness
)
read -r -a targets <<< "${FUZZ_TARGETS:-fuzz_perf_csv fuzz_request fuzz_json_inputs fuzz_callgrind fuzz_perf_script fuzz_harness_inputs}"

cxx="${CXX_FUZZ:-clang++}"
if ! command -v "$cxx" > /dev/null; then
  echo "fuzz.sh: $cxx not found (ci/install-deps.sh installs clang and libclang-rt-dev)" >&2
  exit 1
fi
source ci/ccache.sh
# -O1 as libFuzzer's documentation builds, line tables only for the stack
# traces (19% less CPU than RelWithDebInfo: 332 s against 408 s cold),
# asserts on (Debug: no NDEBUG).
start=$SECONDS
# A build directory configured with PERFGATE_FUZZ=ON is used as it is: CI's
# ASan build (ci/sanitize.sh) is one, so its fuzz targets are already built.
if grep -q '^PERFGATE_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2> /dev/null; then
  echo "ci/fuzz.sh: using the fuzz targets of $build"
else
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER="$cxx" -DPERFGATE_FUZZ=ON -DPERFGATE_WERROR=ON -DPERFGATE_BUILD_BENCH=OFF \
    -DPERFGATE_BUILD_EXAMPLES=OFF "${ccache_args[@]}"
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "ci/fuzz.sh: build $((SECONDS - start)) s"

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
artifacts="$(cd "$build" && pwd)/fuzz-artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"

# One target: a scratch corpus, the seeds, at most $seconds.
fuzz_one() {
  local t=$1 bin
  bin="$(cd "$build" && pwd)/tests/fuzz/$t"
  mkdir -p "$scratch/$t"
  # TMPDIR: fuzz_json_inputs writes the event payload to a file there.
  (cd "$scratch" && TMPDIR="$scratch" "$bin" -max_total_time="$seconds" -timeout="$per_input" -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$scratch/$t" "$root/${seeds[$t]}") \
    > "$scratch/$t.log" 2>&1
}

failed=()
pids=()
names=()
finish() {   # waits for the oldest running target
  local rc=0
  wait "${pids[0]}" || rc=$?
  local t="${names[0]}"
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$t.log" | grep -o '[0-9]*$' || echo "?")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz.sh: $t: no failure in ${seconds}s ($runs inputs)"
  else
    echo "fuzz.sh: $t FAILED (exit $rc); its log:" >&2
    tail -n 80 "$scratch/$t.log" >&2
    failed+=("$t")
  fi
}
for t in "${targets[@]}"; do
  if [ -z "${seeds[$t]+x}" ]; then echo "fuzz.sh: unknown target $t" >&2; exit 2; fi
  [ "${#pids[@]}" -lt "$jobs" ] || finish
  fuzz_one "$t" &
  pids+=("$!")
  names+=("$t")
done
while [ "${#pids[@]}" -gt 0 ]; do finish; done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: ${failed[*]} failed; inputs in $artifacts (replay: BINARY INPUT)" >&2
  exit 1
fi
