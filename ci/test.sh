#!/usr/bin/env bash
# Sets up and runs the whole test suite: installs missing dependencies,
# configures, builds and runs ctest. Usage: ci/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
ci/install-deps.sh
source ci/ccache.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGATE_WERROR=ON "${ccache_args[@]}"
start=$SECONDS
cmake --build "$build" -j "$(nproc)"
echo "ci/test.sh: build $((SECONDS - start)) s"
start=$SECONDS
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
echo "ci/test.sh: ctest $((SECONDS - start)) s"
