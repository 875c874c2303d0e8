#!/usr/bin/env bash
# Runs Flamediff on a fresh Debian machine without Docker: installs
# clickhouse-server if missing, starts a private ClickHouse (free loopback
# ports, a temporary directory), creates the schema, seeds the demo data set
# and serves the local web UI until Ctrl-C, which stops everything.
#
# usage: scripts/run.sh [--addr HOST:PORT] [--check]
#   --addr   where the UI listens (default 127.0.0.1:3001; port 0 picks one)
#   --check  stop as soon as the UI answers, printing its list of apps
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/clickhouse.sh

addr=127.0.0.1:3001
check=
while [ $# -gt 0 ]; do
  case $1 in
    --addr) addr=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 [--addr HOST:PORT] [--check]" >&2; exit 2 ;;
  esac
done
command -v go >/dev/null 2>&1 || { echo "Flamediff needs Go $(sed -n 's/^go //p' go.mod) or newer: https://go.dev/dl/" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || apt_install curl
apt_install clickhouse-server

work=$(mktemp -d)
server_pid=
ui_pid=
cleanup() {
  for pid in $ui_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "starting a private ClickHouse"
start_clickhouse "$work"
go build -o "$work/flamediff" ./cmd/flamediff
dsn="clickhouse://$FLAMEDIFF_CLICKHOUSE_ADDR/flamediff"
"$work/flamediff" migrate --dsn "$dsn"
"$work/flamediff" seed --dsn "$dsn"

"$work/flamediff" serve --dsn "$dsn" --addr "$addr" >"$work/serve.out" &
ui_pid=$!
until [ -s "$work/serve.out" ]; do
  kill -0 "$ui_pid" 2>/dev/null || exit 1
  sleep 0.2
done
url=$(sed -n 's/^flamediff serve: //p' "$work/serve.out")
if [ -n "$check" ]; then
  curl -fsS "${url}api/resources/apps"
  exit
fi
echo "ClickHouse: $dsn"
echo "Flamediff is at $url (Ctrl-C stops it and ClickHouse)"
wait "$ui_pid"
