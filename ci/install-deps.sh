#!/usr/bin/env bash
# Installs perfgate's build and test dependencies from Debian/Ubuntu packages,
# only those that are missing. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev            # Beast, Asio, Math (header-only, >= 1.74)
  libsqlite3-dev          # the history store
  libpq-dev               # the store on PostgreSQL (--db postgresql://...)
  postgresql              # the tests' private PostgreSQL server (tests/pg_server.sh)
  nlohmann-json3-dev      # JSON
  libeigen3-dev           # linear algebra in stats/
  libfmt-dev              # formatting
  doctest-dev             # unit tests
  libbenchmark-dev        # microbenchmarks in bench/
  libssl-dev              # SHA-256 (tokens, request keys, testbed fingerprints)
  libcurl4-openssl-dev    # the HTTP client: TLS, proxies (HTTPS_PROXY/NO_PROXY), redirects
  linux-perf              # perf stat, the measurement backend
  libpfm4-dev             # event names beyond perf's generic ones for --backend native
  valgrind                # the deterministic callgrind backend
  python3-yaml            # validating the GitHub workflow files in tests
  libjs-dygraphs          # the dashboard's charts, embedded in the binary at build time
  chromium chromium-driver python3-selenium   # the dashboard's browser tests
  wrk                     # bench/bench_dashboard.py: page latency under load
  clang-format            # ctest check_format: the sources match .clang-format
  clang-tidy              # ci/sanitize.sh: .clang-tidy on perfgate's sources (PERFGATE_CLANG_TIDY)
  clang libclang-rt-dev   # the libFuzzer targets (ci/fuzz.sh): clang, libFuzzer, its sanitizers
  ccache                  # optional: CI's builds through a compiler cache (ci/ccache.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all dependencies present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
