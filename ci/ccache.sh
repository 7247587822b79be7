# shellcheck shell=bash
# Sourced by ci/test.sh, ci/sanitize.sh and ci/fuzz.sh. CMake compiles
# through ccache when it is installed (option PERFGATE_CCACHE, on by default
# then); PERFGATE_CCACHE=0 in the environment turns it off here. A CI machine
# that keeps the cache between runs (CCACHE_DIR, default ~/.cache/ccache)
# rebuilds only what changed, and a fresh clone in another directory still
# hits: paths under the clone are hashed relative to it (CCACHE_BASEDIR) and
# the build directory is not hashed (CCACHE_NOHASHDIR; debug info may then
# name the directory of the build that filled the cache).
# shellcheck disable=SC2034 # ccache_args is read by the scripts that source this one
ccache_args=()
if [ "${PERFGATE_CCACHE:-1}" = 0 ]; then
  ccache_args=(-DPERFGATE_CCACHE=OFF)
elif command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi
