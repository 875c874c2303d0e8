package teststore

import (
	"context"
	"fmt"
	"time"

	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// The titles of the three functions named stringify that StoreStringifies
// stores.
const (
	QsStringify   = "stringify (qs/lib/stringify.js)"
	FastStringify = "stringify (fast-json/lib/stringify.js)"
	NodeStringify = "stringify (node:internal/querystring)"
)

// StringifyBuilds are StoreStringifies' builds, oldest first.
var StringifyBuilds = []string{"b0", "b1", "b2", "b3", "b4", "b5"}

// StoreStringifies stores StringifyBuilds, three runs each, of app: stacks
// that hold three functions named stringify, qs's and fast-json's (each
// calling Node's own), installed under /a in even builds and /srv/b in
// odd ones. From b3 on qs's costs 60 more a run; nothing else changes.
func StoreStringifies(ctx context.Context, store *storage.Store, app string) error {
	for b, build := range StringifyBuilds {
		root := "/a/node_modules/"
		if b%2 == 1 {
			root = "/srv/b/node_modules/"
		}
		for r := range 3 {
			p := &profile.Profile{SampleType: "cpu", Unit: "nanoseconds", Duration: time.Second}
			main := p.Intern(profile.Frame{Name: "main"})
			qs := p.Intern(profile.Frame{Name: "stringify", Module: root + "qs/lib/stringify.js"})
			fast := p.Intern(profile.Frame{Name: "stringify", Module: root + "fast-json/lib/stringify.js"})
			node := p.Intern(profile.Frame{Name: "stringify", Module: "node:internal/querystring"})
			planted := int64(0)
			if b >= 3 {
				planted = 60
			}
			v := int64(r)
			p.Samples = []profile.Sample{{Stack: []uint32{main}, Value: 50 + v}, {Stack: []uint32{main, qs}, Value: 100 + v + planted},
				{Stack: []uint32{main, fast}, Value: 80 + v%2}, {Stack: []uint32{main, qs, node}, Value: 40 + v},
				{Stack: []uint32{main, fast, node}, Value: 30 + 2*v}}
			meta := storage.RunMeta{App: app, Build: build, Run: fmt.Sprint(r), Start: time.Date(2026, 1, 1+b, 0, r, 0, 0, time.UTC)}
			if err := store.Write(ctx, meta, p, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
