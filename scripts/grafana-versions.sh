#!/usr/bin/env bash
# Tests the panel, the editors and the data source against the oldest Grafana
# the plugin declares (grafanaDependency in plugin.json) as well as the
# newest, whose packages the checkout installs (docs/PANEL.md, "Grafana
# versions"). The checkout is left as it was: everything happens in a
# temporary copy of its tracked and new files.
#
# 1. Grafana's API check (@grafana/levitate is-compatible): what the plugin
#    uses of @grafana/data, ui and runtime as installed must exist, with the
#    same types, in the oldest version.
# 2. The copy gets the oldest version's @grafana packages, the React they
#    run on and the @grafana/flamegraph of the same line (npm install into
#    the copy), and the API check runs the other way: the plugin as built
#    there against the checkout's newest.
# 3. Type check, unit tests and the browser tests that mount the panel, the
#    editors, the data source's queries and Grafana's own flame graph run
#    in the copy. The report and serve pages are left out: they bundle
#    their own packages and never run inside Grafana.
#
# Usage: scripts/grafana-versions.sh   (needs npm install done in the checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# The oldest Grafana every plugin.json declares: they must agree.
oldest=$(node -e '
  const files = ["plugin.json", "src/panel/plugin.json", "src/datasource/plugin.json"];
  const deps = new Set(files.map((f) => require("./" + f).dependencies.grafanaDependency));
  if (deps.size !== 1) { console.error("grafanaDependency differs between " + files.join(", ") + ": " + [...deps].join(" / ")); process.exit(1); }
  const m = /^>=(\d+\.\d+\.\d+)$/.exec([...deps][0]);
  if (!m) { console.error("grafanaDependency is not \">=x.y.z\": " + [...deps][0]); process.exit(1); }
  console.log(m[1]);
')
newest=$(node -p 'require("./node_modules/@grafana/ui/package.json").version')
# @grafana/flamegraph is published for a few lines only (none for 12.x):
# the newest not newer than the oldest version.
flamegraph=$(npm view "@grafana/flamegraph@<=$oldest" version --json | node -e '
  const v = JSON.parse(require("fs").readFileSync(0, "utf8"));
  console.log([].concat(v).pop());
')
echo "Grafana packages: newest $newest (the checkout's), oldest declared $oldest (@grafana/flamegraph $flamegraph)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/flamediff
mkdir "$copy"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$copy" -xf -
cd "$copy"

# levitate follows one module's imports: one file that imports the three
# plugins' modules (app, panel, data source).
cat >plugins.ts <<'EOF'
export * as app from './src/module';
export * as panel from './src/panel/module';
export * as datasource from './src/datasource/module';
EOF
levitate() { # target-version
  local target="@grafana/data@$1,@grafana/ui@$1,@grafana/runtime@$1"
  # levitate reports a package it could not process and still passes.
  "$repo/node_modules/.bin/levitate" is-compatible --path plugins.ts --target "$target" 2>&1 | tee "$work/levitate.out"
  if grep -q 'Could not process' "$work/levitate.out"; then
    echo "levitate could not compare every package with $1" >&2
    return 1
  fi
}

echo "=== levitate: the plugin on @grafana $newest, against $oldest"
ln -s "$repo/node_modules" node_modules
levitate "$oldest"
rm node_modules

echo "=== installing @grafana $oldest, React 18, @grafana/flamegraph $flamegraph into a copy"
node -e '
  const fs = require("fs");
  const [v, fg] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
  for (const k of ["@grafana/data", "@grafana/runtime", "@grafana/schema", "@grafana/ui"]) p.dependencies[k] = v;
  // Grafana before 13.2 runs React 18.
  p.dependencies.react = p.dependencies["react-dom"] = "^18.3.0";
  p.devDependencies["@types/react"] = p.devDependencies["@types/react-dom"] = "^18.3.0";
  p.devDependencies["@grafana/flamegraph"] = fg;
  fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");
' "$oldest" "$flamegraph"
npm install --no-audit --no-fund --loglevel=error
installed=$(node -p '["@grafana/ui", "@grafana/data", "@grafana/runtime", "react"].map((p) => require(p + "/package.json").version).join(" ")')
case "$installed" in
"$oldest $oldest $oldest 18."*) echo "the copy has @grafana/ui, data, runtime and React $installed" ;;
*) echo "the copy has @grafana/ui, data, runtime and React $installed, not $oldest and 18" >&2; exit 1 ;;
esac

echo "=== levitate: the plugin on @grafana $oldest, against $newest"
# levitate's own packages stay the checkout's.
levitate "$newest"

echo "=== typecheck, unit tests (@grafana $oldest)"
npm run typecheck
npm run test:ci

echo "=== browser tests (@grafana $oldest)"
npm run e2e -- panel.spec.ts editors.spec.ts grafana.spec.ts culprits.spec.ts verdict.spec.ts runs.spec.ts \
  around.spec.ts links.spec.ts evolution.spec.ts evolution-keyboard.spec.ts calltree.spec.ts

echo "Grafana $oldest: API check, typecheck, unit and browser tests passed"
