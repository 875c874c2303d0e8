package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EsbuildVersion is the esbuild a test installs when the module's
// node_modules has none (package.json's devDependency).
const EsbuildVersion = "0.28.2"

// Esbuild returns the esbuild command: the module's node_modules' (npm
// install puts it there), else one npm installs into a directory of the
// test.
func Esbuild(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(Root(), "node_modules", ".bin", "esbuild")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	dir := t.TempDir()
	c := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, "esbuild@"+EsbuildVersion)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("npm install esbuild@%s: %v\n%s", EsbuildVersion, err, out)
	}
	return filepath.Join(dir, "node_modules", ".bin", "esbuild")
}

// NodeModule is the directory of the npm package name in the module's
// node_modules; the test fails without it.
func NodeModule(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(Root(), "node_modules", filepath.FromSlash(name))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		t.Fatalf("no npm package %s: run npm install: %v", name, err)
	}
	return dir
}
