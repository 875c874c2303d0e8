// Package toolprofiles records profiles with the real profilers, for the
// tests of the formats they write: a tiny program per runtime, run once per
// test binary. Each program has a fast and a slow path over one leaf, and a
// planted slowdown makes the slow path slower in the head build.
package toolprofiles

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Callgrind runs valgrind's callgrind on a C program built with gcc, whose
// slow() calls leaf() with slowN iterations, and returns the callgrind
// file's path in dir.
func Callgrind(dir string, slowN int) (string, error) {
	src := filepath.Join(dir, "prog.c")
	prog := fmt.Sprintf(`#include <stdio.h>
static double leaf(int n) {
	double s = 0;
	for (int i = 0; i < n; i++) s += i * 0.5;
	return s;
}
double fast(void) { return leaf(20000); }
double slow(void) { return leaf(%d); }
int main(void) {
	double t = 0;
	for (int k = 0; k < 5; k++) t += fast() + slow();
	printf("%%d\n", t > 0);
	return 0;
}
`, slowN)
	if err := os.WriteFile(src, []byte(prog), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "prog")
	if err := run(dir, "gcc", "-g", "-O0", "-o", bin, src); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "run.callgrind")
	return out, run(dir, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out, bin)
}

// NodeApp is the JavaScript program CPUProfile runs; the line of each
// function is its 1-based line here.
const NodeApp = `function leaf(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) } return s }
function fast() { return leaf(2e6) }
function slow() { return leaf(SLOW) }
let t = 0
for (let k = 0; k < 20; k++) { t += fast() + slow() }
if (t < 0) console.log(t)
`

// CPUProfile runs NodeApp with `node --cpu-prof`, slow() doing slowN
// iterations, and returns the .cpuprofile's path in dir.
func CPUProfile(dir string, slowN int) (string, error) {
	app := filepath.Join(dir, "app.js")
	if err := os.WriteFile(app, []byte(strings.Replace(NodeApp, "SLOW", fmt.Sprint(slowN), 1)), 0o600); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "prof")
	if err := run(dir, "node", "--cpu-prof", "--cpu-prof-dir="+out, "--cpu-prof-name=app.cpuprofile",
		"--cpu-prof-interval=250", app); err != nil {
		return "", err
	}
	return filepath.Join(out, "app.cpuprofile"), nil
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...) // #nosec G204 -- the tests' own tools
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}
