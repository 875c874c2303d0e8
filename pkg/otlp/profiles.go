// Package otlp turns OpenTelemetry data into runs: OTLP profiles
// (ProfileRuns) and traces as span flame graphs (TraceRuns), and reads the
// files and bodies that carry them (protobuf or JSON, one message or the
// Collector file exporter's stream, gzipped or not). It reads no file: the
// CLI and the receiver hand it bytes. docs/OTLP.md describes the mapping.
package otlp

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
	"github.com/flamediff/flamediff/pkg/storage"
)

// DefaultRunAttribute is the attribute (of a profile or its resource) that
// names a profile's run when no run is given.
const DefaultRunAttribute = "flamediff.run"

// Run is one run read from OTLP data: its key and its samples.
type Run struct {
	App, Build, Run string
	Profile         *profile.Profile
}

// RunProfiles makes runs what the store takes, each with meta (commit,
// branch, labels, time) and its own app, build and run.
func RunProfiles(runs []Run, meta storage.RunMeta) []storage.RunProfile {
	out := make([]storage.RunProfile, len(runs))
	for i, r := range runs {
		m := meta
		m.App, m.Build, m.Run = r.App, r.Build, r.Run
		out[i] = storage.RunProfile{Meta: m, Profile: r.Profile}
	}
	return out
}

// ProfileOptions choose how OTLP profiles become runs.
type ProfileOptions struct {
	// SampleType picks, in a run whose profiles have several sample types,
	// the one to read; "" means the last one, pprof's rule (a pprof profile
	// converted to OTLP has one OTLP profile per sample type, in order).
	SampleType string
	// RunAttribute names the run; "" means DefaultRunAttribute. A profile
	// without it is named by its profile id.
	RunAttribute string
	// App, Build and Run, when set, replace service.name, service.version
	// and the run attribute of every profile.
	App, Build, Run string
}

type runKey struct{ app, build, run string }

// typedProfile is a run's samples of one sample type while they are read;
// times are absolute (0: none) until the run's start is known.
type typedProfile struct {
	p          *profile.Profile
	times      []uint64
	start, end uint64
}

type profileRun struct {
	key    runKey
	types  []string // in order of first appearance
	byType map[string]*typedProfile
}

// ProfileRuns converts OTLP profiles into runs, one per (app, build, run)
// key: app is the resource's service.name, build its service.version, run
// the run attribute, each replaced by the option when set. Profiles of one
// key and sample type are merged (a profiler sends one every few
// seconds); of its sample types one is read (ProfileOptions.SampleType).
// Each line of a location is a frame (function name, else system name;
// module the mapping's file; file and line the function's file and start
// line, as pkg/ingest reads pprof), inlined calls expanded, root first; a
// location without lines is named as pprof names it. A sample's timestamps
// are its events' times (value 1 each when it has no values); the earliest
// profile time of the run is its start. Samples of value 0 are dropped,
// negative values and indices out of their table are errors. name
// identifies the input in errors.
func ProfileRuns(o ProfileOptions, name string, batches ...pprofile.Profiles) ([]Run, error) {
	if o.RunAttribute == "" {
		o.RunAttribute = DefaultRunAttribute
	}
	runs := map[runKey]*profileRun{}
	var order []runKey
	for bi, pd := range batches {
		c := &profileConverter{dict: pd.Dictionary(), locs: map[int32][]uint32{}}
		for ri, rp := range pd.ResourceProfiles().All() {
			res := rp.Resource().Attributes()
			for si, sp := range rp.ScopeProfiles().All() {
				for pi, prof := range sp.Profiles().All() {
					where := fmt.Sprintf("%s: batch %d resource %d scope %d profile %d", name, bi, ri, si, pi)
					attrs, err := pprofile.FromAttributeIndices(c.dict.AttributeTable(), prof, c.dict)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", where, err)
					}
					k, err := o.key(res, attrs, prof)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", where, err)
					}
					r := runs[k]
					if r == nil {
						r = &profileRun{key: k, byType: map[string]*typedProfile{}}
						runs[k] = r
						order = append(order, k)
					}
					if err := c.add(r, prof, o.SampleType); err != nil {
						return nil, fmt.Errorf("%s: %w", where, err)
					}
				}
			}
		}
	}
	out := make([]Run, 0, len(order))
	for _, k := range order {
		p, err := runs[k].finish(o.SampleType)
		if err != nil {
			return nil, fmt.Errorf("%s: run %s/%s/%s: %w", name, k.app, k.build, k.run, err)
		}
		if p, err = ingest.Check(p, name); err != nil {
			return nil, err
		}
		out = append(out, Run{App: k.app, Build: k.build, Run: k.run, Profile: p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no profile with samples", name)
	}
	return out, nil
}

func (o ProfileOptions) key(res, attrs pcommon.Map, prof pprofile.Profile) (runKey, error) {
	k := runKey{app: o.App, build: o.Build, run: o.Run}
	if k.app == "" {
		k.app = attr(res, "service.name")
	}
	if k.build == "" {
		k.build = attr(res, "service.version")
	}
	if k.run == "" {
		if k.run = attr(attrs, o.RunAttribute); k.run == "" {
			k.run = attr(res, o.RunAttribute)
		}
	}
	if id := prof.ProfileID(); k.run == "" && !id.IsEmpty() {
		k.run = hex.EncodeToString(id[:])
	}
	switch {
	case k.app == "":
		return k, fmt.Errorf("no app: the resource has no service.name (or give the app)")
	case k.build == "":
		return k, fmt.Errorf("no build: the resource has no service.version (or give the build)")
	case k.run == "":
		return k, fmt.Errorf("no run: neither attribute %s nor a profile id (or give the run)", o.RunAttribute)
	}
	return k, nil
}

// attr is a string form of attribute key of m, "" when absent.
func attr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// profileConverter reads the profiles of one batch, which share its
// dictionary.
type profileConverter struct {
	dict pprofile.ProfilesDictionary
	// locs caches each location's frames, leaf first, per run profile
	// (frame ids are the profile's).
	locs  map[int32][]uint32
	owner *profile.Profile
}

func (c *profileConverter) str(i int32) (string, error) {
	t := c.dict.StringTable()
	if i < 0 || int(i) >= t.Len() {
		return "", fmt.Errorf("string index %d out of range (%d strings)", i, t.Len())
	}
	return t.At(int(i)), nil
}

func (c *profileConverter) add(r *profileRun, prof pprofile.Profile, want string) error {
	st, err := c.str(prof.SampleType().TypeStrindex())
	if err != nil {
		return fmt.Errorf("sample type: %w", err)
	}
	unit, err := c.str(prof.SampleType().UnitStrindex())
	if err != nil {
		return fmt.Errorf("sample unit: %w", err)
	}
	tp := r.byType[st]
	if tp == nil {
		tp = &typedProfile{p: &profile.Profile{SampleType: st, Unit: unit}}
		r.byType[st] = tp
		r.types = append(r.types, st)
	}
	start := uint64(prof.Time())
	end := start + prof.DurationNano()
	if tp.start == 0 || start != 0 && start < tp.start {
		tp.start = start
	}
	tp.end = max(tp.end, end)
	if want != "" && st != want {
		return nil // read only for its name, which the error of a missing type lists
	}
	if c.owner != tp.p {
		clear(c.locs)
		c.owner = tp.p
	}
	for i, s := range prof.Samples().All() {
		if err := c.sample(tp, s); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

func (c *profileConverter) sample(tp *typedProfile, s pprofile.Sample) error {
	stacks := c.dict.StackTable()
	si := s.StackIndex()
	if si < 0 || int(si) >= stacks.Len() {
		return fmt.Errorf("stack index %d out of range (%d stacks)", si, stacks.Len())
	}
	var frames []uint32 // leaf first
	for _, li := range stacks.At(int(si)).LocationIndices().All() {
		fs, err := c.location(tp.p, li)
		if err != nil {
			return err
		}
		frames = append(frames, fs...)
	}
	values, times := s.Values(), s.TimestampsUnixNano()
	if values.Len() > 0 && times.Len() > 0 && values.Len() != times.Len() {
		return fmt.Errorf("%d values and %d timestamps", values.Len(), times.Len())
	}
	emit := func(v int64, t uint64) error {
		if v < 0 {
			return fmt.Errorf("negative value %d", v)
		}
		if v == 0 {
			return nil
		}
		if len(frames) == 0 {
			return fmt.Errorf("no locations")
		}
		stack := slices.Clone(frames)
		slices.Reverse(stack)
		tp.p.Samples = append(tp.p.Samples, profile.Sample{Stack: stack, Value: v, Time: -1})
		tp.times = append(tp.times, t)
		return nil
	}
	switch {
	case times.Len() == 0:
		var sum int64
		for _, v := range values.All() {
			if v < 0 {
				return fmt.Errorf("negative value %d", v)
			}
			sum += v
			if sum < 0 {
				return fmt.Errorf("values add up past the int64 maximum")
			}
		}
		return emit(sum, 0)
	default:
		for i, t := range times.All() {
			v := int64(1)
			if values.Len() > 0 {
				v = values.At(i)
			}
			if err := emit(v, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// location interns the frames of location li into p, leaf first.
func (c *profileConverter) location(p *profile.Profile, li int32) ([]uint32, error) {
	if fs, ok := c.locs[li]; ok {
		return fs, nil
	}
	locs := c.dict.LocationTable()
	if li < 0 || int(li) >= locs.Len() {
		return nil, fmt.Errorf("location index %d out of range (%d locations)", li, locs.Len())
	}
	loc := locs.At(int(li))
	var module string
	var mapping pprofile.Mapping
	if mi := loc.MappingIndex(); mi != 0 {
		maps := c.dict.MappingTable()
		if mi < 0 || int(mi) >= maps.Len() {
			return nil, fmt.Errorf("mapping index %d out of range (%d mappings)", mi, maps.Len())
		}
		mapping = maps.At(int(mi))
		var err error
		if module, err = c.str(mapping.FilenameStrindex()); err != nil {
			return nil, fmt.Errorf("mapping %d file: %w", mi, err)
		}
	}
	var ids []uint32
	var lines []profile.Frame
	funcs := c.dict.FunctionTable()
	for _, line := range loc.Lines().All() {
		fi := line.FunctionIndex()
		if fi < 0 || int(fi) >= funcs.Len() {
			return nil, fmt.Errorf("function index %d out of range (%d functions)", fi, funcs.Len())
		}
		fn := funcs.At(int(fi))
		name, err := c.str(fn.NameStrindex())
		if err == nil && name == "" {
			name, err = c.str(fn.SystemNameStrindex())
		}
		var file string
		if err == nil {
			file, err = c.str(fn.FilenameStrindex())
		}
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fi, err)
		}
		if name == "" {
			continue
		}
		lines = append(lines, profile.Frame{Name: name, Module: module, File: file, Line: max(fn.StartLine(), 0)})
	}
	ids = p.InternLines(ids, lines)
	if len(ids) == 0 {
		ids = append(ids, p.Intern(profile.Frame{Name: addressName(loc.Address(), module, mapping), Module: module}))
	}
	c.locs[li] = ids
	return ids, nil
}

// addressName names an unsymbolized location as pprof does (and as
// pkg/ingest names one of a pprof file): by its offset in the mapped file
// when there is one, else by address.
func addressName(addr uint64, file string, m pprofile.Mapping) string {
	if file != "" && addr >= m.MemoryStart() {
		return fmt.Sprintf("%s+0x%x", filepath.Base(file), addr-m.MemoryStart()+m.FileOffset())
	}
	return fmt.Sprintf("0x%x", addr)
}

// finish returns the run's profile of sample type want ("" the last),
// its sample times made offsets from the run's start.
func (r *profileRun) finish(want string) (*profile.Profile, error) {
	if want == "" {
		want = r.types[len(r.types)-1]
	}
	tp := r.byType[want]
	if tp == nil {
		return nil, fmt.Errorf("no sample type %q: this run has %q", want, r.types)
	}
	p := tp.p
	if len(p.Samples) == 0 {
		return nil, fmt.Errorf("no samples of type %q", want)
	}
	start := tp.start
	for _, t := range tp.times {
		if t != 0 && (start == 0 || t < start) {
			start = t
		}
	}
	if start != 0 {
		p.Start = time.Unix(0, int64(start)).UTC() // #nosec G115 -- nanoseconds since 1970 below 2^63 until 2262
	}
	if tp.end > start && tp.start != 0 {
		p.Duration = time.Duration(tp.end - start) // #nosec G115 -- a profile's span, far below 2^63 ns
	}
	for i, t := range tp.times {
		if t != 0 {
			p.Samples[i].Time = int64(t - start) // #nosec G115 -- t >= start
		}
	}
	return p, nil
}
