package realbuild

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/verdict"
)

// A Python app of two packages that both define work in their
// __init__.py, each installed by pip into a virtual environment from a
// wheel (wheelOf: no build backend is needed, nor reachable), and a
// main script that calls both and the standard library's json.
var pythonApp = map[string]string{
	"pkga/setup.py": "from setuptools import setup\nsetup(name='pkga', version='1.0', packages=['pkga'])\n",
	"pkga/pkga/__init__.py": `def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
`,
	"pkgb/setup.py": "from setuptools import setup\nsetup(name='pkgb', version='1.0', packages=['pkgb'])\n",
	"pkgb/pkgb/__init__.py": `def work(n):
    return len(",".join(str(i) for i in range(n)))
`,
	"app/main.py": `import json
import pkga
import pkgb

def main():
    total = 0
    for r in range(40):
        total += pkga.work(20000) + pkgb.work(20000)
        total += len(json.dumps({"r": r, "items": list(range(2000))}))
    print(total)

main()
`,
}

// wheelOf packs the package dir/pkg/pkg as a pure-Python wheel (PEP 427:
// the package, and a dist-info of METADATA, WHEEL and RECORD) and returns
// its path.
func wheelOf(t *testing.T, dir, pkg string) string {
	t.Helper()
	file := filepath.Join(dir, pkg+"-1.0-py3-none-any.whl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	info := pkg + "-1.0.dist-info/"
	var record strings.Builder
	add := func(name, body string) {
		w, err := z.Create(name)
		if err == nil {
			_, err = io.WriteString(w, body)
		}
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(sum[:]), len(body))
	}
	code, err := os.ReadFile(filepath.Join(dir, pkg, pkg, "__init__.py"))
	if err != nil {
		t.Fatal(err)
	}
	add(pkg+"/__init__.py", string(code))
	add(info+"METADATA", "Metadata-Version: 2.1\nName: "+pkg+"\nVersion: 1.0\n")
	add(info+"WHEEL", "Wheel-Version: 1.0\nGenerator: flamediff-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
	record.WriteString(info + "RECORD,,\n")
	w, err := z.Create(info + "RECORD")
	if err == nil {
		_, err = io.WriteString(w, record.String())
	}
	if err := errors.Join(err, z.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return file
}

// pstatsOwn is each function's own time in nanoseconds as Python's pstats
// reads file, keyed by the function's name and its file's last two path
// elements, and their sum.
func pstatsOwn(t *testing.T, file string) (map[string]int64, int64) {
	t.Helper()
	out, err := exec.Command("python3", "-c", `import json, pstats, sys
stats = pstats.Stats(sys.argv[1]).stats
print(json.dumps([[f[0], f[2], v[2]] for f, v in stats.items()]))`, file).Output()
	if err != nil {
		t.Fatalf("pstats of %s: %v", file, err)
	}
	var rows [][3]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	own := map[string]int64{}
	var sum int64
	for _, r := range rows {
		ns := int64(math.Round(r[2].(float64) * 1e9))
		parts := strings.Split(filepath.ToSlash(r[0].(string)), "/")
		key := r[1].(string) + " " + strings.Join(parts[max(0, len(parts)-2):], "/")
		own[key] += ns
		sum += ns
	}
	return own, sum
}

// Python: the app run with cProfile from two virtual environments at two
// paths, its packages installed by pip into each. The two packages' work
// stay apart (rows of their own, titled with their __init__.py, with the
// own time pstats reads), a run's total is pstats' sum of own times, and
// the A/A across the two environments has no culprit.
func TestPythonAppTwoVirtualEnvs(t *testing.T) {
	src := Write(t, pythonApp)
	envs := map[string]string{
		"one": filepath.Join(t.TempDir(), "srv", "venvs", "one"),
		"two": filepath.Join(t.TempDir(), "home", "ci", "build-7", ".venv"),
	}
	apps := map[string]string{}
	for side, env := range envs {
		install(t, src, "python3", "-m", "venv", env)
		py := filepath.Join(env, "bin", "python")
		install(t, src, py, "-m", "pip", "install", "-q", "--no-index", wheelOf(t, src, "pkga"), wheelOf(t, src, "pkgb"))
		apps[side] = filepath.Join(filepath.Dir(env), "app")
		install(t, src, "cp", "-r", "app", apps[side])
	}
	files := map[string][]string{}
	out := t.TempDir()
	for i := range runsPerSide() {
		for _, side := range []string{"one", "two"} {
			file := filepath.Join(out, fmt.Sprintf("%s-%02d.prof", side, i))
			c := exec.Command(filepath.Join(envs[side], "bin", "python"), "-m", "cProfile", "-o", file, "main.py")
			c.Dir = apps[side]
			run(t, c)
			files[side] = append(files[side], file)
		}
	}
	for side, fs := range files {
		own, sum := pstatsOwn(t, fs[0])
		js, _ := Flamediff(t, "query", "--type", "functions", "--output", "json", "--head", fs[0])
		got := map[string]float64{}
		var total float64
		for _, r := range Rows(t, js, "functions") {
			got[fmt.Sprint(r["function"])] = r["self"].(float64)
			total += r["self"].(float64)
		}
		for _, pkg := range []string{"pkga", "pkgb"} {
			title, key := "work ("+pkg+"/__init__.py)", "work "+pkg+"/__init__.py"
			if got[title] != float64(own[key]) || own[key] == 0 {
				t.Errorf("%s: %s's own time %v ns, pstats %d", side, title, got[title], own[key])
			}
		}
		if total != float64(sum) {
			t.Errorf("%s: the run's total %v ns, pstats' own times add up to %d", side, total, sum)
		}
	}
	if v := DiffVerdict(t, files["one"], files["two"], "--alpha", "0.01"); v.Result == verdict.Fail || len(Culprits(v)) > 0 {
		t.Errorf("one app from two virtual environments:\n%s", Describe(v))
	}
}
