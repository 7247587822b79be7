#!/usr/bin/env bash
# The test suite under sanitizers, as CI runs it after ci/test.sh:
#   1. everything under AddressSanitizer + UndefinedBehaviorSanitizer,
#      compiled with clang: the same build runs clang-tidy (.clang-tidy) on
#      perfgate's sources and holds the libFuzzer targets that ci/fuzz.sh
#      then runs (one build for the three: CI's time);
#   2. the server and client suites (threads, sockets), the store's
#      threaded cases (background checkpoints, read scopes, concurrent
#      readers and writers) and the service's committer cases under
#      ThreadSanitizer.
# Usage: ci/sanitize.sh [build-dir-prefix]. Needs the dependencies of ci/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-build-san}"
jobs="$(nproc)"
source ci/ccache.sh

# halt_on_error: undefined behaviour fails the test instead of printing a line.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"

# One clang build for three jobs. It is the ASan+UBSan build of the suite;
# with PERFGATE_FUZZ it is also instrumented for libFuzzer (coverage only;
# the tests link without libFuzzer's main) and builds tests/fuzz/, which
# ci/fuzz.sh runs from it; and clang-tidy runs on the sources of model/ ...
# cli/ as they compile (PERFGATE_CLANG_TIDY; with PERFGATE_WERROR a finding
# fails the build), which ccache does not cache. Libraries at -O1 with line
# tables (libFuzzer's documented flags), the test programs at -O0
# (PERFGATE_TEST_CXX_FLAGS), asserts on. Three separate builds (gcc ASan,
# clang-tidy, clang fuzz) cost about 280 s more wall time on 2 cores.
start=$SECONDS
cmake -S . -B "$prefix-asan" -G Ninja -DCMAKE_CXX_COMPILER="${CXX_SANITIZE:-clang++}" -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DPERFGATE_SANITIZE=address -DPERFGATE_FUZZ=ON \
  -DPERFGATE_WERROR=ON -DPERFGATE_CLANG_TIDY=ON -DPERFGATE_BUILD_BENCH=OFF "${ccache_args[@]}"
cmake --build "$prefix-asan" -j "$jobs"
echo "ci/sanitize.sh: asan build (with clang-tidy) $((SECONDS - start)) s"
# Left out here; all of them run in the test command's plain build (ci/test.sh):
# - Six timing tests expect a verdict (a 3x or 4x slower loop fails) at
#   8-10 repetitions; under ASan on a PVM guest the instrumented runner's
#   fork/exec noise swamps it (all three failed on an idle machine,
#   2026-11-25, while passing unsanitized).
# - perfgate qualify's two measuring cases (tests/test_qualify.cpp): a 30%
#   injected slowdown caught in every gate at 8 repetitions is a timing
#   verdict (above); its callgrind case runs perfgate-exec, ASan-instrumented
#   in this build, under valgrind, which cannot run ASan's shadow memory.
# - The push replays (tests/test_push_replay.cpp): a dozen perfgate runs
#   under callgrind each; the server code they reach is test_service's and
#   test_server's, which run here. About 20 s of the stage's budget.
# - The two browser tests: Chromium drives the pages and the flame graph;
#   the server code they reach is the router's and the pages', which
#   test_pages and test_server run here. 25 s under ASan.
# - The compare size limits (a million samples, 4,352 counters), on SQLite
#   and PostgreSQL: 150 s under ASan, two thirds of test_service. The limit
#   checks are arithmetic on counts; the ingest and compare code they fill
#   with data is what the suite's other cases run here.
# - The checks of documents (docs/openapi.json stale, valid, the answers
#   against it; stale paths): they read files and the records the suites
#   leave, not sanitized code; the plain build runs them.
documents='^(openapi_.*|postgresql/openapi_answers|stale_paths)$'
timing_verdicts='perfgate qualify: native on a 20 ms program|perfgate qualify: callgrind reports|perfgate run end to end \(real perf, local SQLite\)|perfgate run --budget / --max-repetitions|perfgate run --server: all benchmarks in one gate|run --harness gbench: the benchmark made 3x slower|run --harness gbench --budget: '
browsers='^(dashboard|flamegraph)_browser$'
replays='^push replay: '
size_limits='service: one compare reads at most max_compare_counters counters and max_compare_samples samples'
start=$SECONDS
ctest --test-dir "$prefix-asan" --output-on-failure -j "$jobs" --timeout 900 -E "$timing_verdicts|$browsers|$size_limits|$documents|$replays"
echo "ci/sanitize.sh: asan ctest $((SECONDS - start)) s"

start=$SECONDS
# -O1 -g1 for the libraries (the test programs stay -O0): the lanes ran in 79 s
# instead of 106 s at -O0 -g, the build in the same 190 s; -g1 keeps the line
# tables a race report names.
cmake -S . -B "$prefix-tsan" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DPERFGATE_SANITIZE=thread \
  -DPERFGATE_WERROR=ON -DPERFGATE_BUILD_BENCH=OFF -DPERFGATE_BUILD_EXAMPLES=OFF "${ccache_args[@]}"
cmake --build "$prefix-tsan" -j "$jobs" --target perfgate test_server test_router test_http_client test_github \
  test_store test_service
echo "ci/sanitize.sh: tsan build $((SECONDS - start)) s"
start=$SECONDS
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# Two lanes (2 cores; the suites mostly wait on sockets): the server suite,
# and the others one after another. Each suite's output goes to its own log,
# printed when it ends; a failure in either lane fails the stage.
tsan_logs=$(mktemp -d)
run_tsan() {
  local log="$tsan_logs/$1.log"
  shift
  if (cd "$prefix-tsan/tests" && "$@") >"$log" 2>&1; then
    cat "$log"
  else
    cat "$log"
    echo "ci/sanitize.sh: tsan: $* failed" >&2
    return 1
  fi
}
run_tsan server ./test_server &
lane_server=$!
(
  run_tsan router ./test_router &&
    run_tsan http_client ./test_http_client &&
    run_tsan github ./test_github &&
    run_tsan store ./test_store '--test-case=store (sqlite): background checkpoints*,store: a read_scope*,store: concurrent readers and a writer,store: two store objects*' &&
    run_tsan service ./test_service '--test-case=service: compare_later*,service: commit_queue*'
) &
lane_rest=$!
status=0
wait "$lane_server" || status=1
wait "$lane_rest" || status=1
rm -rf "$tsan_logs"
((status == 0))
echo "ci/sanitize.sh: tsan run $((SECONDS - start)) s"
