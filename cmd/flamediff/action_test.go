package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's composite action (action.yml) is valid action metadata
// by the schema @action-validator/cli checks against (SchemaStore's
// github-action schema), and the validator does reject a broken copy: a
// run step without its shell.
func TestActionMetadata(t *testing.T) {
	validator, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", "action-validator"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(validator); err != nil {
		t.Fatalf("%v: run npm install (scripts/test.sh does)", err)
	}
	action, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	validate := func(text string) (string, error) {
		dir := t.TempDir() // the validator tells an action from a workflow by its file name
		file := filepath.Join(dir, "action.yml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(validator, file).CombinedOutput()
		return string(out), err
	}
	if out, err := validate(string(action)); err != nil {
		t.Errorf("action.yml is not valid action metadata: %v\n%s", err, out)
	}
	broken := strings.Replace(string(action), "      shell: bash\n      working-directory:", "      working-directory:", 1)
	if broken == string(action) {
		t.Fatal("action.yml has no build step with a shell to remove")
	}
	if out, err := validate(broken); err == nil || !strings.Contains(out, "/shell") {
		t.Errorf("a step without its shell passed the validator: %v\n%s", err, out)
	}
	// The action runs the loop script with flags the script knows.
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "flamediff-loop.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--base-cmd", "--head-cmd", "--out", "--ext", "--batch", "--max-runs", "--min-base-share",
		"--alpha", "--beta", "--flamediff", "--dsn", "--app", "--base-build", "--head-build"} {
		if !strings.Contains(string(action), flag+" ") || !strings.Contains(string(script), "\t"+flag+")") {
			t.Errorf("flag %s is not passed by action.yml or not read by the script", flag)
		}
	}
}
