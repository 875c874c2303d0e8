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
	// One profile's executables stay apart by path until Identify tells
	// the program from the others; storage and the engine meet the program
	// at any path (FrameIdentity).
	if e, g := p.Intern(Frame{Name: "f", Module: "/opt/app/1.2/m"}), p.Intern(Frame{Name: "f", Module: "/opt/app/1.3/m"}); e == a || g == e || len(p.Frames) != 4 {
		t.Errorf("an executable at two paths interned as %d, %d (%d frames), want two frames", e, g, len(p.Frames))
	}
	if FrameIdentity("f", "/opt/app/1.2/m") != FrameIdentity("f", "/opt/app/1.3/m") {
		t.Error("the executable at two paths has two identities")
	}
	// An index rebuilt from Frames (a Profile made by hand) agrees.
	q := Profile{Frames: []Frame{{Name: "g"}, {Name: "g", File: "dup.go"}}}
	if i := q.Intern(Frame{Name: "g", File: "g.go"}); i != 0 {
		t.Errorf("interned at %d, want the first of the equal frames", i)
	}
}
