package changes

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// repo is a throwaway git repository for tests.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required:", err)
	}
	r := &repo{t, t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files ("" deletes one), commits and returns the commit id.
func (r *repo) commit(files map[string]string) string {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.dir, name)
		if body == "" {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "c")
	return r.git("rev-parse", "HEAD")
}

const aV1 = `package a

// Keep is unchanged except for this comment.
func Keep() {}

func Change() int {
	return 1
}

type T struct{}

func (t *T) Ptr() {}

func (t T) Val() {}

// between functions

func Gone() {}

func Map[K comparable, V any](m map[K]V) int {
	return len(m)
}

type L[E any] struct{ e []E }

func (l *L[E]) Push(e E) { l.e = append(l.e, e) }

func init() {}
`

const aV2 = `package a

// Keep is unchanged except for this comment, which changed.
func Keep() {}

func Change() int {
	return 2
}

type T struct{}

func (t *T) Ptr() { _ = 1 }

func (t T) Val() {}

// between functions, edited

func Added() {}

func Map[K comparable, V any](m map[K]V) int {
	return len(m) + 0
}

type L[E any] struct{ e []E }

func (l *L[E]) Push(e E) {
	l.e = append(l.e, e)
}

func init() { _ = 2 }
`

func TestFromGitDiff(t *testing.T) {
	r := newRepo(t)
	from := r.commit(map[string]string{
		"go.mod":          "module example.com/app\n\ngo 1.22\n",
		"a/a.go":          aV1,
		"main.go":         "package main\n\nfunc main() { helper() }\n\nfunc helper() {}\n",
		"yaml.v3/y.go":    "package yaml\n\nfunc Parse() {}\n",
		"old/o.go":        "package old\n\nfunc Moved() {}\n",
		"sub/go.mod":      "module example.com/sub\n",
		"sub/deep/s.go":   "package deep\n\nfunc S() {}\n",
		"README.md":       "not go\n",
		"a/other.go":      "package a\n\nfunc Other() {}\n",
		"a/testdata/x.go": "package x\n\nfunc Fixture() {}\n",
	})
	if err := os.Rename(filepath.Join(r.dir, "old"), filepath.Join(r.dir, "new")); err != nil {
		t.Fatal(err)
	}
	to := r.commit(map[string]string{
		"a/a.go":          aV2,
		"main.go":         "package main\n\nfunc main() { helper() }\n\nfunc helper() { println() }\n",
		"yaml.v3/y.go":    "package yaml\n\nfunc Parse() { println() }\n",
		"sub/deep/s.go":   "package deep\n\nfunc S() { println() }\n",
		"a/a_test.go":     "package a_test\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"README.md":       "still not go\n",
		"a/testdata/x.go": "package x\n\nfunc Fixture() { println() }\n",
	})

	got, err := FromGitDiff(filepath.Join(r.dir, "a"), from, to) // any directory in the work tree
	if err != nil {
		t.Fatal(err)
	}
	want := Changes{
		Modified: []string{
			"example.com/app/a.(*L[...]).Push",
			"example.com/app/a.(*T).Ptr",
			"example.com/app/a.Change",
			"example.com/app/a.Map[...]",
			"example.com/app/a/testdata.Fixture", // the package name does not matter, the path does
			"example.com/app/yaml%2ev3.Parse",
			"example.com/sub/deep.S",
			"main.helper",
		},
		Added: []string{
			"example.com/app/a.Added",
			"example.com/app/a_test.TestX",
			"example.com/app/new.Moved",
		},
		Removed: []string{
			"example.com/app/a.Gone",
			"example.com/app/old.Moved",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}

	back, err := FromGitDiff(r.dir, to, from)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Added, want.Removed) || !reflect.DeepEqual(back.Removed, want.Added) ||
		!reflect.DeepEqual(back.Modified, want.Modified) {
		t.Errorf("reverse diff %+v is not the mirror of %+v", back, want)
	}

	same, err := FromGitDiff(r.dir, to, to)
	if err != nil || len(same.Modified)+len(same.Added)+len(same.Removed) != 0 {
		t.Errorf("diff of a revision with itself: %+v, %v", same, err)
	}
}

func TestFromGitDiffErrors(t *testing.T) {
	r := newRepo(t)
	c1 := r.commit(map[string]string{"go.mod": "module m\n", "a.go": "package m\n\nfunc F() {}\n"})
	c2 := r.commit(map[string]string{"a.go": "package m\n\nfunc F() {\n"})
	noMod := newRepo(t)
	n1 := noMod.commit(map[string]string{"a.go": "package m\n\nfunc F() {}\n"})
	n2 := noMod.commit(map[string]string{"a.go": "package m\n\nfunc F() { println() }\n"})
	tests := []struct {
		name, dir, from, to, wantErr string
	}{
		{"unknown revision", r.dir, c1, "nosuchrev", `unknown revision "nosuchrev"`},
		{"option-like revision", r.dir, "--output=/tmp/x", c1, "bad revision"},
		{"empty revision", r.dir, "", c1, "bad revision"},
		{"syntax error", r.dir, c1, c2, "a.go:3:12: expected"},
		{"no go.mod", noMod.dir, n1, n2, "no go.mod"},
		{"not a repository", t.TempDir(), "HEAD~1", "HEAD", "rev-parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromGitDiff(tt.dir, tt.from, tt.to)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseHunk(t *testing.T) {
	tests := []struct {
		line     string
		old, cur lineRange
		bad      bool
	}{
		{line: "@@ -3 +3 @@", old: lineRange{3, 3}, cur: lineRange{3, 3}},
		{line: "@@ -10,2 +12,5 @@ func F() {", old: lineRange{10, 11}, cur: lineRange{12, 16}},
		{line: "@@ -7,0 +8,2 @@", old: lineRange{7, 6}, cur: lineRange{8, 9}},
		{line: "@@ -1,x +1 @@", bad: true},
		{line: "@@ 1 +1 @@", bad: true},
		{line: "@@ -1 +1", bad: true},
	}
	for _, tt := range tests {
		old, cur, err := parseHunk(tt.line)
		if (err != nil) != tt.bad {
			t.Errorf("%q: error %v", tt.line, err)
			continue
		}
		if !tt.bad && (old != tt.old || cur != tt.cur) {
			t.Errorf("%q: got %v %v, want %v %v", tt.line, old, cur, tt.old, tt.cur)
		}
	}
}

func TestPathToPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"compress/flate":    "compress/flate",
		"gopkg.in/yaml.v3":  "gopkg.in/yaml%2ev3",
		"example.com/a.b/c": "example.com/a.b/c",
		"x/we%ird\"":        "x/we%25ird%22",
		"main":              "main",
	} {
		if got := pathToPrefix(in); got != want {
			t.Errorf("pathToPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
