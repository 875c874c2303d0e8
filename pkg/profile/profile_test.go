package profile

import "testing"

// Name and module identify a frame; the first source position given wins.
func TestInternSourcePositions(t *testing.T) {
	var p Profile
	a := p.Intern(Frame{Name: "f", Module: "m"})
	if b := p.Intern(Frame{Name: "f", Module: "m", File: "f.go", Line: 3}); b != a {
		t.Fatalf("a known frame with a file interned apart: %d, %d", a, b)
	}
	if c := p.Intern(Frame{Name: "f", Module: "m", File: "other.go", Line: 9}); c != a {
		t.Fatalf("a second file made a second frame: %d", c)
	}
	if got := p.Frames[a]; got.File != "f.go" || got.Line != 3 {
		t.Errorf("frame %+v, want the first position given, f.go:3", got)
	}
	if d := p.Intern(Frame{Name: "f", Module: "/usr/lib/libn.so.1"}); d == a || len(p.Frames) != 2 {
		t.Errorf("another module is another frame: %d, %d frames", d, len(p.Frames))
	}
	if e := p.Intern(Frame{Name: "f", Module: "/opt/app/1.2/m"}); e != a || len(p.Frames) != 2 || p.Frames[a].Module != "m" {
		t.Errorf("the executable at another path is another frame (%d, %d frames) or changed the first path: %+v", e, len(p.Frames), p.Frames[a])
	}
	// An index rebuilt from Frames (a Profile made by hand) agrees.
	q := Profile{Frames: []Frame{{Name: "g"}, {Name: "g", File: "dup.go"}}}
	if i := q.Intern(Frame{Name: "g", File: "g.go"}); i != 0 {
		t.Errorf("interned at %d, want the first of the equal frames", i)
	}
}
