#!/usr/bin/env bash
# Runs every test of Flamediff on a fresh Debian machine: installs what is
# missing (ClickHouse, Chromium, Go modules, npm packages), starts a private
# ClickHouse on free loopback ports, runs the Go unit and integration tests,
# the tagged tests, every benchmark once (small sizes), the fuzz targets, and
# the frontend unit and browser tests, stops the server again, and fails
# if the run changed the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/clickhouse.sh

log() { printf '\n=== %s\n' "$*"; }

# What the checkout looks like before the run (empty on a fresh clone): the
# tests must leave it so.
in_git=
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  in_git=1
  checkout_before=$(git status --porcelain --untracked-files=all)
fi

apt_install clickhouse-server chromium
# The profilers whose files the format tests record (internal/toolprofiles):
# valgrind's callgrind and gcc, Firefox (its own profiler), Python's
# cProfile, and the JDK's javac, java and jfr (Node comes with npm below).
apt_install valgrind gcc firefox-esr python3
if ! command -v javac >/dev/null 2>&1 || ! command -v jfr >/dev/null 2>&1; then
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
fi
# internal/realbuild records a C program with perf (Debian's linux-perf).
command -v perf >/dev/null 2>&1 || apt_install linux-perf

log "Go modules and npm packages"
go mod download
# npm install, not npm ci: the registry mirror has at times lacked @swc/core's
# other-platform optional packages, which npm ci then rejects and npm install
# skips cleanly. The lock file must come out unchanged: pkg/web/dist records a
# hash of it (TestDistIsCurrent).
npm install --no-audit --no-fund --loglevel=error
if [ -n "$in_git" ] && ! git diff --exit-code --stat -- package-lock.json; then
  echo "npm install changed package-lock.json: commit it and run npm run build:report" >&2
  exit 1
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

log "starting a private ClickHouse"
start_clickhouse "$work"
echo "ClickHouse at $FLAMEDIFF_CLICKHOUSE_ADDR"

# Patterns name the Go trees: ./... would wander into node_modules, where
# some npm packages ship Go files.
log "go vet"
go vet ./pkg/... ./cmd/... ./internal/... ./provisioning/...

# Grafana's plugin validator runs gosec on pkg/; a HIGH finding must be made
# safe or justified where it stands. gosec goes to a temporary GOBIN, not
# go.mod (the validator compares go.mod with the modules the binary links).
log "gosec (HIGH findings in pkg/)"
GOBIN="$work/gobin" go install github.com/securego/gosec/v2/cmd/gosec@v2.22.8
"$work/gobin/gosec" -quiet -severity high ./pkg/...

log "Go tests (unit and integration)"
# internal/realbuild builds and runs CPU-bound programs under the profiler:
# on its own, so that it neither slows nor is slowed by the packages that
# record real profilers' files (cmd/flamediff, pkg/plugin, pkg/ingest).
# The two tests that diff the real tools' recordings (a planted slowdown
# in each format) record every tool (Chromium, Firefox, the JDK, valgrind,
# Node, Python) in their own test process: one package at a time, after the rest,
# so that neither records while the other loads the cores (side by side,
# a Firefox or Chromium diff once came back PASS with no culprit).
go test -count=1 -timeout 30m -skip '^TestToolFormats' ./pkg/... ./cmd/... $(go list ./internal/... | grep -v '/internal/realbuild$') ./provisioning/...
go test -count=1 -p 1 -timeout 20m -run '^TestToolFormats' ./cmd/flamediff/ ./pkg/plugin/
go test -count=1 -timeout 20m ./internal/realbuild/

# Tests built only with a tag: the fault points armed (pkg/internal/fault).
log "Go tests built with -tags faultinject"
go test -count=1 -tags faultinject $(grep -rlE --include='*_test.go' '^//go:build (.*[^!])?faultinject' pkg cmd internal |
  xargs -n1 dirname | sort -u | sed 's|^|./|')

# Every benchmark once, at the small sizes testing.Short asks for, so that
# the checks inside them run; the figures in docs/ come from full runs.
log "Go benchmarks, once each (-short sizes)"
go test -count=1 -short -run '^$' -bench . -benchtime 1x -timeout 30m ./pkg/... ./cmd/... ./internal/... ./provisioning/...

# Every fuzz target of every package (ingestion formats, git diffs,
# settings, query models, the engine), each for a bounded time.
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" as -fuzztime ends, writing no failing input (a race
# fixed in Go 1.27, go.dev/issue/75804): such a run is tried once more; a
# run that writes a failing input, or fails otherwise, fails at once.
log "Go fuzz targets, ${FUZZTIME:=10s} each"
fuzz() { # dir target
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "./$1" >"$work/fuzz.out" 2>&1
}
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' pkg cmd internal | xargs -n1 dirname | sort -u); do
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | cut -d' ' -f2); do
    if ! fuzz "$dir" "$target"; then
      if grep -q 'context deadline exceeded' "$work/fuzz.out" && ! grep -q 'Failing input written' "$work/fuzz.out"; then
        echo "$target (./$dir): the coordinator's deadline race, no failing input; once more"
        fuzz "$dir" "$target" ||
          { cat "$work/fuzz.out"; echo "fuzz target $target of ./$dir failed" >&2; exit 1; }
      else
        cat "$work/fuzz.out"; echo "fuzz target $target of ./$dir failed" >&2; exit 1
      fi
    fi
    echo "ok $target (./$dir)"
  done
done

log "Go race tests of the data source (load test over go-plugin)"
go test -count=1 -race -timeout 20m -run 'Load' ./pkg/plugin/...

log "frontend: typecheck, lint, unit tests, build"
npm run typecheck
npm run lint
npm run test:ci
npm run build

log "browser tests"
npm run e2e

# The panel, editors and data source against the oldest Grafana that
# grafanaDependency declares, in a temporary copy, and Grafana's API check
# (levitate) both ways between it and the checkout's newest.
log "the oldest Grafana declared: API check, unit and browser tests"
scripts/grafana-versions.sh

log "plugin package: frontend (webpack) then backend (mage, the SDK's build targets)"
go tool mage -v build:linux
node -e '
  const fs = require("fs");
  const read = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
  const app = read("dist/plugin.json"), ds = read("dist/datasource/plugin.json"), panel = read("dist/panel/plugin.json");
  const bad = [];
  if (app.type !== "app") bad.push("dist/plugin.json is not the app");
  if (!ds.backend || !ds.alerting || ds.executable !== "gpx_flamediff") bad.push("data source lacks backend/alerting/executable");
  if (panel.type !== "panel") bad.push("dist/panel/plugin.json is not a panel");
  for (const f of ["dist/module.js", "dist/datasource/module.js", "dist/panel/module.js", "dist/datasource/gpx_flamediff_linux_amd64"])
    if (!fs.existsSync(f)) bad.push(f + " missing");
  if (bad.length) { console.error(bad.join("\n")); process.exit(1); }
  console.log("dist/ holds the app, the data source with its backend, and the panel");
'
# Grafana's plugin validator checks the plugin id linked into the binary
# against the plugin.json next to it: the data source's, not the app's.
ds_id=$(node -p 'require("./src/datasource/plugin.json").id')
go version -m dist/datasource/gpx_flamediff_linux_amd64 | grep -q "main.pluginID=$ds_id" ||
  { echo "the backend binary does not carry the data source's plugin id $ds_id" >&2; exit 1; }
echo "the backend binary carries the plugin id $ds_id"

if [ -n "$in_git" ]; then
  log "the checkout is as it was"
  checkout_after=$(git status --porcelain --untracked-files=all)
  if [ "$checkout_after" != "$checkout_before" ]; then
    diff <(echo "$checkout_before") <(echo "$checkout_after") >&2 || true
    echo "the tests changed the checkout (git status above, < before, > after): tests must write to temporary folders" >&2
    exit 1
  fi
  echo "git status is as before the run"
fi

log "all tests passed"
