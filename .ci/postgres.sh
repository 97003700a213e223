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
  # Debian's packages keep the server binaries off PATH, in a folder per major version.
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  # Elsewhere (other distributions, a build from source, links in /usr/local/bin) they are on
  # PATH; pg_ctl finds postgres beside the real initdb, so links are followed.
  if dir=$(command -v initdb 2>/dev/null) && command -v pg_ctl >/dev/null 2>&1; then
    dir=$(readlink -f "$dir")
    echo "${dir%/*}"
    return 0
  fi
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

# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (created
# when the machine has none).
run_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

ensure_owner() {
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
}

start() {
  install_postgres
  ensure_owner
  local bin dir port first
  bin=$(pg_bin)
  dir=$(mktemp -d /tmp/agent-memory-pg.XXXXXX)
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
  fi
  run_as_owner "$bin/initdb" -D "$dir/data" -A trust -U agent >/dev/null
  # Another server (another checkout's tests) may hold the port: try the next ones.
  first=${AGENT_MEMORY_TEST_PG_PORT:-54329}
  for port in $(seq "$first" $((first + 20))); do
    if run_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" \
      start >/dev/null; then
      export AGENT_MEMORY_TEST_PG_DIR="$dir"
      export AGENT_MEMORY_TEST_PG_URL="postgres://agent@127.0.0.1:$port/postgres"
      echo "PostgreSQL running at $AGENT_MEMORY_TEST_PG_URL (data in $dir)"
      return 0
    fi
  done
  echo "PostgreSQL did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  return 1
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
