#!/bin/sh
# Entry point of the local stand-in for the official `postgres` image (tests only): the same
# environment (POSTGRES_PASSWORD[_FILE], POSTGRES_USER, POSTGRES_DB, PGDATA), first-start
# initialisation, password auth from any host, `postgres` as the command, never run as root.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then POSTGRES_PASSWORD="$(cat "$POSTGRES_PASSWORD_FILE")"; fi
user="${POSTGRES_USER:-postgres}"
database="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "Error: database is uninitialized and POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  pwfile="$(mktemp)"
  printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  postgres -c listen_addresses='' &
  pid=$!
  until pg_isready -q -h /var/run/postgresql; do sleep 0.1; done
  if [ "$database" != postgres ]; then
    psql -q -h /var/run/postgresql -U "$user" -d postgres -c "create database \"$database\""
  fi
  kill -INT "$pid"
  wait "$pid" || true
  echo "PostgreSQL init process complete; ready for start up."
fi
exec "$@"
