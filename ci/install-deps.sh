#!/usr/bin/env bash
# Installs perfgate's dependencies from Debian/Ubuntu packages, only those
# that are missing. Needs root (or sudo) when something is missing.
#
# Usage: ci/install-deps.sh [SET...]   (default: all)
#   build    what building the perfgate binary needs (the action's source build)
#   runtime  what every backend may run (perf, valgrind) and the libraries
#            loaded on first use (libcurl: --server and GitHub; libpq:
#            postgresql:// databases)
#   test     what the test suite, the sanitizer and fuzz stages and the
#            benchmarks add (PostgreSQL, Chromium, clang, ...)
#   all      build + runtime + test (ci/test.sh, the README's test command)
# The package names are Debian's (and Ubuntu's, except linux-perf: on Ubuntu
# perf comes from linux-tools-$(uname -r); ci/action-install.sh picks it).
set -euo pipefail

build=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev            # Beast, Asio, Math (header-only, >= 1.74)
  libsqlite3-dev          # the history store
  libpq-dev               # the store on PostgreSQL (headers; libpq is loaded on first use)
  nlohmann-json3-dev      # JSON
  libeigen3-dev           # linear algebra in stats/
  libfmt-dev              # formatting
  libpugixml-dev          # XML: Catch2's reporter output (perfgate compare --input-format catch2)
  libssl-dev              # SHA-256 (tokens, request keys, testbed fingerprints)
  libcurl4-openssl-dev    # the HTTP client (headers; libcurl is loaded on first use)
  libpfm4-dev             # event names beyond perf's generic ones for --backend native
  libjs-dygraphs          # the dashboard's charts, embedded in the binary at build time
)
runtime=(
  linux-perf              # perf stat, the measurement backend
  valgrind                # the deterministic callgrind backend
  libcurl4                # --server, GitHub comments and statuses
  libpq5                  # postgresql:// databases
)
test=(
  doctest-dev             # unit tests
  postgresql              # the tests' private PostgreSQL server (tests/pg_server.sh)
  libbenchmark-dev        # microbenchmarks in bench/
  python3-yaml            # validating the GitHub workflow files in tests
  python3-jsonschema      # ctest openapi_answers: the server tests' answers against docs/openapi.json
  libxml2-utils           # ctest junit_schema: xmllint checks --format junit against tests/data/junit/junit.xsd
  nodejs npm              # ctest openapi_valid: the OpenAPI validator (tests/openapi/install_validator.sh)
  curl                    # tests/test_action_install.py: the action downloads its release with curl
  chromium chromium-driver python3-selenium   # the dashboard's browser tests
  wrk                     # bench/e2e/bench_dashboard.py: page latency under load
  clang-format            # ctest check_format: the sources match .clang-format
  clang-tidy              # ci/sanitize.sh: .clang-tidy on perfgate's sources (PERFGATE_CLANG_TIDY)
  clang libclang-rt-dev   # the libFuzzer targets (ci/fuzz.sh): clang, libFuzzer, its sanitizers
  ccache                  # optional: CI's builds through a compiler cache (ci/ccache.sh)
)

sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(all)
packages=()
for s in "${sets[@]}"; do
  case "$s" in
    build) packages+=("${build[@]}") ;;
    runtime) packages+=("${runtime[@]}") ;;
    test) packages+=("${test[@]}") ;;
    all) packages+=("${build[@]}" "${runtime[@]}" "${test[@]}") ;;
    *) echo "install-deps: unknown set '$s' (build, runtime, test or all)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  # A node from elsewhere (NodeSource's nodejs carries its own npm) will do.
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  if [ "$p" = nodejs ] && command -v node >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all dependencies present (${sets[*]})"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
