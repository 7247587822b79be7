#!/usr/bin/env bash
# Tests the artifacts of ci/release.sh in a minimal Debian 12 (mmdebstrap
# --variant=minbase bookworm: no -dev package, no SQLite, no libpq, no
# libcurl), and fails loudly on the first step that does not do what it
# should:
#
#   1. the tarball's checksum (sha256sum -c);
#   2. the unpacked tarball: perfgate --version; compare of the example
#      captures exits 1 (a regression); run --backend rusage writes a report;
#      serve answers /healthz on 127.0.0.1; a postgresql:// database and a
#      --server URL each fail with the error that names the missing package;
#   3. apt-get install ./perfgate_*.deb resolves its dependencies (and its
#      Recommends would resolve on Debian 12); /usr/bin/perfgate compare exits
#      1; the man page, the systemd unit and the example env file are there;
#   4. with libpq5 and libcurl4 installed, perfgate loads them: a PostgreSQL
#      server that is not there is store.open, the server answers over libcurl.
#
# Usage (as root; needs mmdebstrap, and the Debian mirror the first time and
# for step 4): bash ci/test_release.sh DIR
#
# The chroot's tarball is built once and kept (PERFGATE_RELEASE_CACHE,
# default /var/cache/perfgate-release; PERFGATE_DEBIAN_MIRROR, default
# http://deb.debian.org/debian); delete it to refresh it.
#
# PERFGATE_RELEASE_SUITE=jammy (or another Ubuntu suite) runs the same test
# in a minimal Ubuntu instead (PERFGATE_UBUNTU_MIRROR, default
# http://archive.ubuntu.com/ubuntu, main). Debian has no package of Ubuntu's
# archive key, so without /usr/share/keyrings/ubuntu-archive-keyring.gpg that
# mirror is trusted unsigned: for a throwaway chroot only. The test runs in a
# mount namespace of its own, so /proc and /sys mounted into the chroot go
# away with it. Not part of ctest or CI: see CONTRIBUTING.md "Releasing".
set -euo pipefail

fail() {
  echo "test_release: FAILED: $*" >&2
  exit 1
}
step() { echo "test_release: --- $*"; }

[ $# -eq 1 ] || fail "usage: bash ci/test_release.sh DIR (the directory ci/release.sh wrote)"
[ "$(id -u)" -eq 0 ] || fail "run as root (chroot, mounts)"
command -v mmdebstrap > /dev/null || fail "mmdebstrap is missing: apt-get install mmdebstrap"
if [ -z "${PERFGATE_TEST_RELEASE_NS:-}" ]; then
  # Private mounts: whatever is mounted below ends with this process.
  exec unshare --mount --propagation private env PERFGATE_TEST_RELEASE_NS=1 bash "$0" "$@"
fi

src="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "$1" && pwd)"
cache_dir="${PERFGATE_RELEASE_CACHE:-/var/cache/perfgate-release}"
suite="${PERFGATE_RELEASE_SUITE:-bookworm}"
case "$suite" in
  bookworm | trixie | sid)
    distro=Debian
    mirror="${PERFGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    ;;
  *)
    distro=Ubuntu
    mirror="${PERFGATE_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}"
    if [ -f /usr/share/keyrings/ubuntu-archive-keyring.gpg ]; then
      mirror="deb [signed-by=/usr/share/keyrings/ubuntu-archive-keyring.gpg] $mirror $suite main"
    else
      mirror="deb [trusted=yes] $mirror $suite main"
    fi
    ;;
esac
cache="$cache_dir/$suite-minbase.tar"
start=$(date +%s%N)
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

shopt -s nullglob
tarballs=("$dir"/perfgate-*-linux-"$(uname -m)".tar.gz)
debs=("$dir"/perfgate_*.deb)
shopt -u nullglob
[ ${#tarballs[@]} -eq 1 ] || fail "expected one perfgate-*-linux-$(uname -m).tar.gz in $dir, found ${#tarballs[@]}"
[ ${#debs[@]} -eq 1 ] || fail "expected one perfgate_*.deb in $dir, found ${#debs[@]}"
tarball="${tarballs[0]}"
deb="${debs[0]}"
name="$(basename "$tarball" .tar.gz)"
version="${name#perfgate-}"
version="${version%-linux-*}"

step "checksum"
(cd "$dir" && sha256sum -c "$(basename "$tarball").sha256") || fail "sha256sum -c $(basename "$tarball").sha256"

if [ ! -f "$cache" ]; then
  step "building the minimal $distro $suite ($cache, once)"
  mkdir -p "$cache_dir"
  # The package lists stay in the tarball: apt-get install ./perfgate.deb
  # resolves against them without an apt-get update.
  mmdebstrap --variant=minbase --include=apt --format=tar --skip=cleanup/apt/lists "$suite" "$cache.part" "$mirror" ||
    fail "mmdebstrap"
  mv "$cache.part" "$cache"
fi

work="$(mktemp -d /tmp/perfgate-test-release.XXXXXX)"
root="$work/root"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; fi
  for m in "$root/sys" "$root/proc"; do
    if mountpoint -q "$m"; then umount -l "$m"; fi
  done
  if mountpoint -q "$root/proc" || mountpoint -q "$root/sys"; then
    echo "test_release: $root still has mounts; not removing it" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT

step "unpacking the chroot"
mkdir "$root"
tar -xpf "$cache" -C "$root"
mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# A command inside the chroot, with a clean environment.
chroot_env=(/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
  DEBIAN_FRONTEND=noninteractive)
in_chroot() { chroot "$root" "${chroot_env[@]}" "$@"; }
# expect_exit CODE LOG COMMAND...: runs COMMAND in the chroot, its output in LOG.
expect_exit() {
  local want="$1" log="$2"
  shift 2
  local rc=0
  in_chroot "$@" > "$log" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    cat "$log" >&2
    fail "$* exited $rc, expected $want"
  fi
}
expect_in() { # expect_in FILE TEXT
  grep -qF -- "$2" "$1" || {
    cat "$1" >&2
    fail "expected '$2' in the output above"
  }
}

for lib in libpq.so.5 libcurl.so.4 libsqlite3.so.0 libpfm.so.4 libfmt.so.9; do
  if [ -n "$(find "$root/usr/lib" "$root/lib" -name "$lib*" -print -quit 2> /dev/null)" ]; then
    fail "the minimal chroot has $lib: it cannot show that perfgate runs without it"
  fi
done
mkdir -p "$root/srv/data"
cp "$src/examples/data/baseline.csv" "$src/examples/data/regressed.csv" "$root/srv/data/"

# --- the tarball ---------------------------------------------------------
step "tarball: unpack and perfgate --version"
t0=$(date +%s%N)
tar -xzf "$tarball" -C "$root/opt"
expect_exit 0 "$work/version.log" "/opt/$name/bin/perfgate" --version
unpack_ms=$(ms_since "$t0")
expect_in "$work/version.log" "perfgate $version ("
cat "$work/version.log"
for f in bin/perfgate-exec share/man/man1/perfgate.1 LICENSE README; do
  [ -f "$root/opt/$name/$f" ] || fail "the tarball has no $name/$f"
done
pg="/opt/$name/bin/perfgate"

step "tarball: compare exits 1 on the regressed capture"
expect_exit 1 "$work/compare.log" "$pg" compare --baseline /srv/data/baseline.csv --candidate /srv/data/regressed.csv
expect_in "$work/compare.log" "perfgate: fail"
head -n 1 "$work/compare.log"

step "tarball: run --backend rusage writes a report"
mkdir -p "$root/srv/run"
# A verdict, whichever: 0 (pass) or 1 (a timing difference between two runs of /bin/true).
rc=0
in_chroot sh -c "cd /srv/run && $pg run --backend rusage --baseline /bin/true --candidate /bin/true \
  --format json --output /srv/run/report.json" > "$work/run.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || {
  cat "$work/run.log" >&2
  fail "perfgate run exited $rc, expected a verdict (0 or 1)"
}
[ -s "$root/srv/run/report.json" ] || fail "perfgate run wrote no /srv/run/report.json"
expect_in "$root/srv/run/report.json" '"verdict"'
[ -s "$root/srv/run/.perfgate/perfgate.db" ] || fail "perfgate run stored nothing in .perfgate/perfgate.db"
echo "report: $(grep -o '"verdict": *"[a-z]*"' "$root/srv/run/report.json" | head -n 1)"

step "tarball: serve answers /healthz"
# chroot execs env, which execs perfgate: $! is perfgate's pid.
chroot "$root" "${chroot_env[@]}" "$pg" serve --db /srv/serve.db --listen 127.0.0.1:0 --threads 1 \
  > "$work/serve.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's#^perfgate: listening on http://127\.0\.0\.1:\([0-9]*\).*#\1#p' "$work/serve.log")"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2> /dev/null || break
  sleep 0.1
done
[ -n "$port" ] || {
  cat "$work/serve.log" >&2
  fail "perfgate serve did not say it was listening"
}
# bash's /dev/tcp: the chroot has no HTTP client.
expect_exit 0 "$work/healthz.log" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port &&
  printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3 && cat <&3"
expect_in "$work/healthz.log" "HTTP/1.1 200"
head -n 1 "$work/healthz.log"

step "tarball: without libpq5, a postgresql:// database names the package"
expect_exit 4 "$work/nolibpq.log" "$pg" db migrate --db "postgresql://perfgate@127.0.0.1:1/perfgate"
expect_in "$work/nolibpq.log" "[store.libpq_missing]"
expect_in "$work/nolibpq.log" "apt-get install libpq5"
cat "$work/nolibpq.log"

step "tarball: without libcurl4, --server names the package"
expect_exit 4 "$work/nocurl.log" "$pg" alerts list --server "http://127.0.0.1:$port" --project demo --token x
expect_in "$work/nocurl.log" "[http.unreachable]"
expect_in "$work/nocurl.log" "apt-get install libcurl4"
cat "$work/nocurl.log"
tarball_ms=$(ms_since "$t0")

# --- the .deb ------------------------------------------------------------
step "deb: apt-get install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
# What apt would install with the Recommends: each resolves. (Ubuntu's perf,
# the alternative linux-tools-generic, fits the generic kernel only: not checked.)
expect_exit 0 "$work/deb-simulate.log" apt-get install --simulate "/tmp/$(basename "$deb")"
recommended=(libcurl4)
if [ "$distro" = Debian ]; then recommended+=(linux-perf); fi
for p in "${recommended[@]}"; do expect_in "$work/deb-simulate.log" "Inst $p "; done
expect_exit 0 "$work/deb-suggests.log" apt-cache show valgrind libpq5
expect_exit 0 "$work/deb-install.log" apt-get install -y --no-install-recommends "/tmp/$(basename "$deb")"
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
expect_exit 0 "$work/deb-status.log" dpkg-query -W -f '${Status} ${Version} ${Depends}\n' perfgate
expect_in "$work/deb-status.log" "install ok installed $version"
cat "$work/deb-status.log"
expect_exit 1 "$work/deb-compare.log" /usr/bin/perfgate compare --baseline /srv/data/baseline.csv \
  --candidate /srv/data/regressed.csv
expect_in "$work/deb-compare.log" "perfgate: fail"
for f in /usr/bin/perfgate-exec /usr/lib/systemd/system/perfgate@.service \
  /usr/share/doc/perfgate/examples/perfgate.env /usr/share/doc/perfgate/copyright; do
  [ -f "$root$f" ] || fail "the .deb installed no $f"
done
man_pages=("$root"/usr/share/man/man1/perfgate.1*)
[ -f "${man_pages[0]}" ] || fail "the .deb installed no man page under /usr/share/man/man1"
echo "man page: ${man_pages[0]#"$root"}"
expect_in "$root/usr/lib/systemd/system/perfgate@.service" "ExecStart=/usr/bin/perfgate serve"

# --- the libraries perfgate loads at run time ----------------------------
step "deb: with libpq5 and libcurl4 installed, perfgate loads them"
# The lists in the cached chroot may be older than the mirror: refresh them first.
expect_exit 0 "$work/update.log" apt-get update -qq
expect_exit 0 "$work/libs.log" apt-get install -y --no-install-recommends libpq5 libcurl4
expect_exit 4 "$work/libpq.log" /usr/bin/perfgate db migrate \
  --db "postgresql://perfgate@127.0.0.1:1/perfgate?connect_timeout=5"
expect_in "$work/libpq.log" "[store.open]"
expect_in "$work/libpq.log" "cannot connect to PostgreSQL"
cat "$work/libpq.log"
# The server answers 401 to a token it does not know: libcurl spoke to it.
expect_exit 2 "$work/curl.log" /usr/bin/perfgate alerts list --server "http://127.0.0.1:$port" --project demo \
  --token x
expect_in "$work/curl.log" "[server.auth]"
cat "$work/curl.log"

kill "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
[ "$rc" -eq 0 ] || {
  cat "$work/serve.log" >&2
  fail "perfgate serve exited $rc after SIGTERM, expected 0"
}

echo "test_release: passed: unpack + perfgate --version $unpack_ms ms; the tarball's steps $tarball_ms ms; all $(ms_since "$start") ms"
