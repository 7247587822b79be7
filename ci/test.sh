#!/usr/bin/env bash
# Sets up and runs the whole test suite: installs missing dependencies,
# configures, builds and runs ctest. Usage: ci/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
ci/install-deps.sh
source ci/ccache.sh
# Release (-O2 -DNDEBUG, no -g): the debug info of RelWithDebInfo made a
# unity batch take 1.7-2.3x the CPU time to compile (service's first batch:
# 29.6-40.4 s against 17.4-17.8 s) for backtraces the suite never prints. The
# test programs that need line tables (memprog, profile_vector, gbench_suite)
# set -g themselves.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPERFGATE_WERROR=ON "${ccache_args[@]}"
start=$SECONDS
cmake --build "$build" -j "$(nproc)"
echo "ci/test.sh: build $((SECONDS - start)) s"
start=$SECONDS
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
echo "ci/test.sh: ctest $((SECONDS - start)) s"
