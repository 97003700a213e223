#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the fleet tests, or stops it.
#
#   source .ci/postgres.sh start   # exports AGENT_MEMORY_TEST_PG_URL
#   .ci/postgres.sh stop DIR
#
# The server runs as an unprivileged user (PostgreSQL refuses root) from a fresh data folder,
# listens on 127.0.0.1 only, trusts local connections, and is stopped at the end of CI.
set -euo pipefail

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

install_postgres() {
  if pg_bin >/dev/null; then
    return 0
  fi
  echo "installing PostgreSQL from the machine's packages"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >/dev/null
  fi
}

run_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start() {
  install_postgres
  local bin dir port
  bin=$(pg_bin)
  dir=$(mktemp -d /tmp/agent-memory-pg.XXXXXX)
  port=${AGENT_MEMORY_TEST_PG_PORT:-54329}
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
  fi
  run_as_owner "$bin/initdb" -D "$dir/data" -A trust -U agent >/dev/null
  run_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" \
    start >/dev/null
  export AGENT_MEMORY_TEST_PG_DIR="$dir"
  export AGENT_MEMORY_TEST_PG_URL="postgres://agent@127.0.0.1:$port/postgres"
  echo "PostgreSQL running at $AGENT_MEMORY_TEST_PG_URL (data in $dir)"
}

stop() {
  local dir=${1:-${AGENT_MEMORY_TEST_PG_DIR:-}}
  [ -n "$dir" ] && [ -d "$dir/data" ] || return 0
  run_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast stop >/dev/null || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
