#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh <command...>
#
# Runs <command> with TEST_POSTGRES_URL pointing at a throw-away PostgreSQL server: started in a
# temp folder, on 127.0.0.1 only, on a free port, with trust auth and fsync off. The server is
# stopped and the folder deleted on every exit path, and the script exits with the command's
# status. Without PostgreSQL installed, the command runs without TEST_POSTGRES_URL (its
# PostgreSQL tests skip) and this script does not fail.
#
# As root (CI), the server runs as the `postgres` OS user (initdb refuses root); as any other
# user, it runs as that user.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command...>" >&2
  exit 2
fi

# The newest Debian server binaries, else whatever pg_ctl is on PATH (other systems).
bindir=""
for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
  if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then bindir="$dir"; fi
done
if [ -z "$bindir" ] && command -v pg_ctl >/dev/null 2>&1; then
  candidate="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
  if [ -x "$candidate/initdb" ] && [ -x "$candidate/postgres" ]; then bindir="$candidate"; fi
fi
if [ -z "$bindir" ]; then
  echo "PostgreSQL not installed: PostgreSQL tests will be skipped; apt-get install postgresql" >&2
  unset TEST_POSTGRES_URL
  exec "$@"
fi

run_as_server_user() {
  if [ "$(id -u)" = "0" ]; then
    # A folder the postgres user may not read as its working directory makes pg_ctl complain.
    (cd "$tmp" && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
  echo "with-postgres: running as root needs the 'postgres' OS user (apt-get install postgresql)" >&2
  exit 1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-pg.XXXXXX")"
data="$tmp/data"
server_pid=""

# Fast shutdown through pg_ctl, else an immediate one by the postmaster's own pid; then reap.
stop_server() {
  if [ -z "$server_pid" ]; then return 0; fi
  if ! run_as_server_user "$bindir/pg_ctl" -D "$data" -m fast -w -t 20 stop >/dev/null 2>&1; then
    local postmaster
    postmaster="$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)"
    if [ -n "$postmaster" ]; then kill -QUIT "$postmaster" 2>/dev/null || true; fi
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

cleanup() {
  stop_server
  rm -rf "$tmp"
}
command_pid=""

# A signal ends the command first (it may hold connections), then the EXIT trap cleans up.
on_signal() {
  if [ -n "$command_pid" ]; then
    kill -TERM "$command_pid" 2>/dev/null || true
    wait "$command_pid" 2>/dev/null || true
  fi
  exit "$1"
}
trap cleanup EXIT
trap 'on_signal 129' HUP
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

if [ "$(id -u)" = "0" ]; then chown postgres: "$tmp"; fi
chmod 700 "$tmp"

run_as_server_user "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
  --locale=C --no-sync >"$tmp/initdb.log" 2>&1 || {
  echo "with-postgres: initdb failed:" >&2
  cat "$tmp/initdb.log" >&2
  exit 1
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

psql="$bindir/psql"
[ -x "$psql" ] || psql=psql

# The server runs in the foreground as this script's child, so this script reaps it. A free port
# can be taken between the check and the bind, so starting is retried on another port.
port=""
for _ in 1 2 3 4 5 6 7 8; do
  candidate=$((20000 + RANDOM % 40000))
  if port_in_use "$candidate"; then continue; fi
  run_as_server_user "$bindir/postgres" -D "$data" -k "$tmp" -p "$candidate" \
    -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
    -c full_page_writes=off -c max_connections=200 >>"$tmp/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    if "$psql" -X -q -h 127.0.0.1 -p "$candidate" -U postgres -d postgres -c 'select 1' \
      >/dev/null 2>&1; then
      port="$candidate"
      break
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -n "$port" ]; then break; fi
  stop_server
done
if [ -z "$port" ]; then
  echo "with-postgres: PostgreSQL did not start:" >&2
  cat "$tmp/server.log" >&2 2>/dev/null || true
  exit 1
fi

database="gatehouse_test"
"$psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
  -v ON_ERROR_STOP=1 -c "create database $database" >/dev/null

export TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/$database"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') at $TEST_POSTGRES_URL" >&2

# In the background (stdin kept) so that a signal to this script is handled at once; `wait`
# returns when the command ends or a trapped signal arrives.
"$@" <&0 &
command_pid=$!
status=0
wait "$command_pid" || status=$?
command_pid=""
exit "$status"
