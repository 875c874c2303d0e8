package changes

import "testing"

// parseDiff never panics, and every range it returns is well-formed.
func FuzzParseDiff(f *testing.F) {
	f.Add([]byte("diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -3,2 +3,0 @@ func f() {\n-a\n-b\n"))
	f.Add([]byte("diff --git \"a/p\\tq.go\" b/y.go\n--- \"a/p\\tq.go\"\n+++ /dev/null\n@@ -1 +0,0 @@\n"))
	f.Fuzz(func(t *testing.T, diff []byte) {
		files, err := parseDiff(diff)
		if err != nil {
			return
		}
		for _, fd := range files {
			for _, r := range append(fd.oldLines, fd.newLines...) {
				if r.first < 0 || r.last < r.first {
					t.Fatalf("range %+v", r)
				}
			}
		}
	})
}
