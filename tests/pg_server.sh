#!/usr/bin/env bash
# A private PostgreSQL server for the tests (Debian's postgresql package).
#
#   tests/pg_server.sh start STATE_DIR   initdb + start; writes STATE_DIR/uri
#   tests/pg_server.sh stop STATE_DIR    stop (immediate) and delete everything
#
# The cluster lives in a fresh directory under $TMPDIR (named in
# STATE_DIR/cluster) and listens only on a Unix socket in that directory: no
# TCP port, so it cannot collide with another server or another test run.
# initdb refuses to run as root, so under root the cluster belongs to the
# unprivileged user $PERFGATE_TEST_PG_USER (default nobody) and initdb and
# postgres run as that user (runuser); the tests connect through the socket
# as the cluster's superuser "perfgate" (trust authentication: nothing but
# this machine's processes can reach the socket directory).
# Durability is off (fsync, synchronous_commit): a test database is thrown away;
# PERFGATE_PG_DURABLE=1 keeps PostgreSQL's defaults (bench/e2e/bench_engines.sh).
set -euo pipefail

usage() { echo "usage: $0 start|stop STATE_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
state=$2

bindir() {
  local d
  if command -v pg_config >/dev/null 2>&1; then
    d=$(pg_config --bindir)
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  fi
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  done
  echo "pg_server.sh: no PostgreSQL server binaries (initdb, pg_ctl) found in pg_config --bindir or" \
       "/usr/lib/postgresql/*/bin: install Debian's postgresql package (ci/install-deps.sh does)" >&2
  exit 1
}

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$owner" -- "$@"
  else
    "$@"
  fi
}

case "$action" in
start)
  bin=$(bindir)
  owner=${PERFGATE_TEST_PG_USER:-nobody}
  mkdir -p "$state"
  if [ -f "$state/cluster" ]; then "$0" stop "$state" || true; mkdir -p "$state"; fi
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-pg-XXXXXX")
  echo "$cluster" > "$state/cluster"
  chmod 700 "$cluster"
  if [ "$(id -u)" -eq 0 ]; then chown "$owner" "$cluster"; fi
  if ! as_owner "$bin/initdb" -D "$cluster/data" -U perfgate --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
       > "$cluster/initdb.log" 2>&1; then
    echo "pg_server.sh: initdb failed (as $(as_owner id -un)):" >&2
    cat "$cluster/initdb.log" >&2
    exit 1
  fi
  # max_connections: a test process opens a pool and a listener per store.
  durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if [ "${PERFGATE_PG_DURABLE:-0}" = 1 ]; then durability=""; fi
  if ! as_owner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 \
       -o "-c listen_addresses='' -k $cluster -p 5432 $durability \
           -c max_connections=400 -c shared_buffers=128MB" start > /dev/null; then
    echo "pg_server.sh: the server did not start; its log:" >&2
    cat "$cluster/server.log" >&2
    exit 1
  fi
  echo "postgresql:///postgres?host=$cluster&port=5432&user=perfgate" > "$state/uri"
  echo "pg_server.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $cluster (socket only)"
  ;;
stop)
  [ -f "$state/cluster" ] || exit 0
  bin=$(bindir)
  owner=${PERFGATE_TEST_PG_USER:-nobody}
  cluster=$(cat "$state/cluster")
  if [ -d "$cluster/data" ]; then
    as_owner "$bin/pg_ctl" -D "$cluster/data" -m immediate -w stop > /dev/null 2>&1 || true
  fi
  rm -rf "$cluster"
  rm -f "$state/cluster" "$state/uri"
  ;;
*) usage ;;
esac
