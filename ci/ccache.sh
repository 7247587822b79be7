# Sourced by ci/test.sh, ci/sanitize.sh and ci/fuzz.sh: sets ccache_args to
# the CMake arguments that compile through ccache when it is installed
# (Debian's ccache, optional; PERFGATE_CCACHE=0 turns it off). A CI machine
# that keeps the cache between runs (CCACHE_DIR, default ~/.cache/ccache)
# rebuilds only what changed; a fresh clone in another directory still hits:
# paths under the clone are hashed relative to it (CCACHE_BASEDIR), and the
# build directory is not hashed (CCACHE_NOHASHDIR: debug info may then name
# the directory of the build that filled the cache).
ccache_args=()
if [ "${PERFGATE_CCACHE:-1}" != 0 ] && command -v ccache > /dev/null; then
  ccache_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi
