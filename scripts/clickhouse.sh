# Shell functions shared by scripts/run.sh and scripts/test.sh: install what
# Debian packages are missing, start a private ClickHouse.

# apt_install installs the Debian packages given whose command is missing
# (arguments are package names that are also command names).
apt_install() {
  local missing=()
  for p in "$@"; do
    command -v "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  printf 'installing %s (Debian packages)\n' "${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# start_clickhouse DIR starts internal/chtest's private ClickHouse (free loopback
# ports, data in a temporary directory removed when it stops), sets
# server_pid and exports FLAMEDIFF_CLICKHOUSE_ADDR (host:port, native).
start_clickhouse() {
  local dir=$1
  go build -o "$dir/chserver" ./internal/chtest/cmd/chserver
  "$dir/chserver" >"$dir/chserver.out" 2>"$dir/chserver.err" &
  server_pid=$!
  for _ in $(seq 1 120); do
    [ -s "$dir/chserver.out" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$dir/chserver.err" >&2; return 1; }
    sleep 0.5
  done
  FLAMEDIFF_CLICKHOUSE_ADDR=$(cut -d" " -f1 "$dir/chserver.out")
  export FLAMEDIFF_CLICKHOUSE_ADDR
}
