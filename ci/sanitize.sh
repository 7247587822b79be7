#!/usr/bin/env bash
# The test suite under sanitizers, as CI runs it after ci/test.sh:
#   1. everything under AddressSanitizer + UndefinedBehaviorSanitizer;
#   2. the server and client suites (threads, sockets), the store's
#      threaded cases (background checkpoints, read scopes, concurrent
#      readers and writers) and the service's committer cases under
#      ThreadSanitizer.
# Usage: ci/sanitize.sh [build-dir-prefix]. Needs the dependencies of ci/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-build-san}"
jobs="$(nproc)"

# halt_on_error: undefined behaviour fails the test instead of printing a line.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"

cmake -S . -B "$prefix-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPERFGATE_SANITIZE=address \
  -DPERFGATE_WERROR=ON -DPERFGATE_BUILD_BENCH=OFF
cmake --build "$prefix-asan" -j "$jobs"
# Three real-perf tests expect a timing verdict (a 4x slower loop fails) at
# 8-10 repetitions; under ASan on a PVM guest the instrumented runner's
# fork/exec noise swamps it (all three failed on an idle machine, 2026-11-25,
# while passing unsanitized). They run in the test command's plain build;
# here, where memory errors are the subject, they are left out.
timing_verdicts='perfgate run end to end \(real perf, local SQLite\)|perfgate run --budget / --max-repetitions|perfgate run --server: all benchmarks in one gate'
ctest --test-dir "$prefix-asan" --output-on-failure -j "$jobs" --timeout 900 -E "$timing_verdicts"

cmake -S . -B "$prefix-tsan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPERFGATE_SANITIZE=thread \
  -DPERFGATE_WERROR=ON -DPERFGATE_BUILD_BENCH=OFF -DPERFGATE_BUILD_EXAMPLES=OFF
cmake --build "$prefix-tsan" -j "$jobs" --target perfgate test_server test_router test_http_client test_github \
  test_store test_service
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
for suite in test_router test_server test_http_client test_github; do
  (cd "$prefix-tsan/tests" && "./$suite")
done
(cd "$prefix-tsan/tests" && ./test_store '--test-case=store (sqlite): background checkpoints*,store: a read_scope*,store: concurrent readers and a writer,store: two store objects*')
(cd "$prefix-tsan/tests" && ./test_service '--test-case=service: compare_later*,service: commit_queue*')
