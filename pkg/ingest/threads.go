package ingest

import (
	"cmp"

	"github.com/flamediff/flamediff/pkg/profile"
)

// threadFrame interns the frame that names thread at the root of its
// stacks (Options.Threads): its module, profile.ThreadModule, marks it as
// a thread, not a function, and makes it one frame across builds.
func threadFrame(p *profile.Profile, thread string) uint32 {
	return p.Intern(profile.Frame{Name: cmp.Or(thread, "thread"), Module: profile.ThreadModule})
}

// jfrThread is the name of a JFR event's thread: an execution sample's
// sampled thread, another event's event thread, by its Java name, else
// its OS name.
func jfrThread(c *jfrChunk, event int64, ev any) string {
	th, class := c.field(event, ev, "sampledThread")
	if th == nil {
		th, class = c.field(event, ev, "eventThread")
	}
	return cmp.Or(c.text(class, th, "javaName"), c.text(class, th, "osName"))
}
