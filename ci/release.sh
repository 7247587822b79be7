#!/usr/bin/env bash
# Builds the release artifacts from this checkout into DIR (default dist/):
#
#   perfgate-VERSION-linux-ARCH.tar.gz         bin/perfgate, bin/perfgate-exec, the man page, LICENSE, README
#   perfgate-VERSION-linux-ARCH.tar.gz.sha256  `sha256sum -c` in DIR checks it
#   perfgate_VERSION_DEBARCH.deb               /usr/bin/perfgate, the man page, the systemd unit, an example env file
#
# Usage: bash ci/release.sh [DIR]
#
# The executables come from the portable build (CMake option
# PERFGATE_PORTABLE): SQLite, libcrypto and libpfm linked statically, fmt
# header-only, libstdc++ and libgcc statically, glibc dynamic; libcurl and
# libpq are loaded at run time when a command needs them. They run on a stock
# Debian 12 or Ubuntu 22.04 and newer: the script fails when an executable
# needs a shared library other than glibc's, or a glibc symbol newer than
# 2.35 (Ubuntu 22.04's glibc). VERSION is project(VERSION) in CMakeLists.txt,
# ARCH is `uname -m`. ci/test_release.sh DIR tests the artifacts in a minimal
# Debian 12 (docs/deployment.md, CONTRIBUTING.md "Releasing").
#
# Environment: PERFGATE_RELEASE_BUILD (build directory, default
# build-release in the checkout), PERFGATE_JOBS (parallel compile jobs,
# default nproc), PERFGATE_DEB_MAINTAINER (the .deb's Maintainer field).
set -euo pipefail
umask 022
start=$(date +%s%N)

src="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$src"
build="${PERFGATE_RELEASE_BUILD:-$src/build-release}"
jobs="${PERFGATE_JOBS:-$(nproc)}"
glibc_max=2.35 # Ubuntu 22.04

fail() {
  echo "release: $*" >&2
  exit 1
}

for tool in cmake ninja objdump readelf dpkg-deb sha256sum gzip tar; do
  command -v "$tool" > /dev/null || fail "$tool is missing (bash ci/install-deps.sh installs the build tools)"
done
if [ -n "$(git status --porcelain 2> /dev/null)" ]; then
  echo "release: warning: the checkout has uncommitted changes; perfgate --version will say -dirty" >&2
fi

# --- build ---------------------------------------------------------------
source ci/ccache.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPERFGATE_PORTABLE=ON \
  -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF -DPERFGATE_BUILD_EXAMPLES=OFF "${ccache_args[@]}" > /dev/null
cmake --build "$build" -j "$jobs" --target perfgate perfgate-exec perfgate_man_page

version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")"
[ -n "$version" ] || fail "no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt"
arch="$(uname -m)"
case "$arch" in
  x86_64) debarch=amd64 ;;
  aarch64) debarch=arm64 ;;
  *) debarch="$(dpkg --print-architecture)" ;;
esac
name="perfgate-$version-linux-$arch"

# --- the tarball's tree --------------------------------------------------
stage="$build/stage"
rm -rf "$stage"
mkdir -p "$stage"
cmake --install "$build" --prefix "$stage/$name" --strip > /dev/null
root="$stage/$name"
for f in bin/perfgate bin/perfgate-exec share/man/man1/perfgate.1; do
  [ -f "$root/$f" ] || fail "cmake --install left no $f"
done

# Self-contained: only glibc's libraries, and no symbol newer than glibc 2.35.
newest_glibc=2.2.5
for exe in "$root/bin/perfgate" "$root/bin/perfgate-exec"; do
  needed="$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
  for lib in $needed; do
    case "$lib" in
      libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux*.so.*) ;;
      *) fail "$(basename "$exe") needs $lib: not self-contained (PERFGATE_PORTABLE should link it statically)" ;;
    esac
  done
  [ -n "$needed" ] || continue # fully static (perfgate-exec)
  versions="$(objdump -T "$exe" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV)"
  too_new=()
  for v in $versions; do
    [ "$(printf '%s\n%s\n' "$v" "$glibc_max" | sort -V | tail -n 1)" = "$glibc_max" ] || too_new+=("$v")
  done
  if [ ${#too_new[@]} -gt 0 ]; then
    for v in "${too_new[@]}"; do objdump -T "$exe" | grep -E "GLIBC_${v//./\\.}([^0-9.]|$)" >&2 || true; done
    fail "$(basename "$exe") needs glibc ${too_new[*]} (the symbols above); Ubuntu 22.04 has $glibc_max"
  fi
  top="$(printf '%s\n' "$versions" | tail -n 1)"
  if [ "$(printf '%s\n%s\n' "$top" "$newest_glibc" | sort -V | tail -n 1)" = "$top" ]; then newest_glibc="$top"; fi
done

cp LICENSE "$root/LICENSE"
cat > "$root/README" << EOF
perfgate $version ($(uname -s) $arch)

A performance-regression gate: it measures a baseline and a candidate build
(perf stat, callgrind or getrusage), compares them with rank statistics and
answers pass / fail / inconclusive, in the terminal, as JSON or as a GitHub
pull-request comment; runs are kept in SQLite or PostgreSQL, locally or on a
shared server with a dashboard.

Run it from here or put bin/ on your PATH (perfgate-exec must stay beside
perfgate):

  bin/perfgate --version
  bin/perfgate compare --baseline old.csv --candidate new.csv
  bin/perfgate run --backend rusage --baseline ./old/bench --candidate ./new/bench
  bin/perfgate serve --db perfgate.db --listen 127.0.0.1:8080
  man share/man/man1/perfgate.1

It needs glibc 2.35 or newer (Debian 12, Ubuntu 22.04 and newer) and nothing
else. These packages add features when they are installed:

  linux-perf (Ubuntu: linux-tools-generic)  perf, the default measurement backend
  valgrind                                  --backend callgrind (counts instructions)
  libcurl4                                  --server URL and GitHub publishing
  libpq5                                    --db postgresql://... (a PostgreSQL store)

Documentation: https://github.com/perfgate/perfgate (docs/, docs/deployment.md
for servers). License: Apache-2.0 (LICENSE).
EOF

# --- tarball and checksum ------------------------------------------------
# Sorted names, root-owned, the commit's time, gzip without a name or time: the
# archive's metadata does not depend on who built it when. (The executables are
# not bit-for-bit reproducible: they hold the build directory's path.)
mtime="$(git log -1 --format=%ct 2> /dev/null || date +%s)"
tarball="$name.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$stage" -cf - "$name" |
  gzip -9n > "$out/$tarball"
(cd "$out" && sha256sum "$tarball" > "$tarball.sha256")

# --- the .deb ------------------------------------------------------------
deb="perfgate_${version}_$debarch.deb"
debroot="$build/deb"
rm -rf "$debroot"
install -D -m 0755 "$root/bin/perfgate" "$debroot/usr/bin/perfgate"
install -D -m 0755 "$root/bin/perfgate-exec" "$debroot/usr/bin/perfgate-exec"
install -d "$debroot/usr/share/man/man1"
gzip -9n < "$root/share/man/man1/perfgate.1" > "$debroot/usr/share/man/man1/perfgate.1.gz"
install -d "$debroot/usr/lib/systemd/system"
sed 's#/usr/local/bin/perfgate#/usr/bin/perfgate#g' ci/deploy/perfgate@.service \
  > "$debroot/usr/lib/systemd/system/perfgate@.service"
grep -q '^ExecStart=/usr/bin/perfgate ' "$debroot/usr/lib/systemd/system/perfgate@.service" ||
  fail "ci/deploy/perfgate@.service: expected ExecStart=/usr/local/bin/perfgate ..."
install -D -m 0644 ci/deploy/perfgate.env "$debroot/usr/share/doc/perfgate/examples/perfgate.env"
install -m 0644 "$root/README" "$debroot/usr/share/doc/perfgate/README"
cat > "$debroot/usr/share/doc/perfgate/copyright" << 'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: perfgate
Source: https://github.com/perfgate/perfgate

Files: *
License: Apache-2.0
 On Debian systems the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
install -d "$debroot/DEBIAN"
(cd "$debroot" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$debroot/DEBIAN/md5sums"
cat > "$debroot/DEBIAN/control" << EOF
Package: perfgate
Version: $version
Architecture: $debarch
Maintainer: ${PERFGATE_DEB_MAINTAINER:-perfgate maintainers <maintainers@perfgate.invalid>}
Installed-Size: $(du -sk --exclude=DEBIAN "$debroot" | cut -f1)
Depends: libc6 (>= $newest_glibc)
Recommends: linux-perf | linux-tools-generic, libcurl4 | libcurl4t64
Suggests: valgrind, libpq5
Section: devel
Priority: optional
Homepage: https://github.com/perfgate/perfgate
Description: performance-regression gate for C++ and systems projects
 perfgate measures a baseline and a candidate build with perf stat,
 callgrind or getrusage (interleaved rounds on a checked machine), compares
 them with rank statistics and multiplicity control, and answers pass, fail
 or inconclusive with per-counter deltas: in the terminal, as JSON, or as a
 GitHub pull-request comment and commit status. Runs are stored in SQLite or
 PostgreSQL, locally or on a shared server with a dashboard and alerts.
 .
 libcurl (--server, GitHub) and libpq (PostgreSQL stores) are loaded when a
 command needs them; perf and valgrind are the measurement backends.
EOF
SOURCE_DATE_EPOCH="$mtime" dpkg-deb --root-owner-group -Zxz --build "$debroot" "$out/$deb" > /dev/null

# --- summary -------------------------------------------------------------
"$root/bin/perfgate" --version
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
size="$(stat -c %s "$out/$tarball")"
echo "release: $out/$tarball ($((size / 1024)) KiB), $tarball.sha256, $deb ($(($(stat -c %s "$out/$deb") / 1024)) KiB)"
echo "release: libc6 (>= $newest_glibc); wall time $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s"
