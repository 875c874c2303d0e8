// Package otlptest builds OTLP data for tests with the Collector's pdata:
// profiles converted from pprof files, and traces from span trees.
package otlptest

import (
	"fmt"
	"os"
	"testing"

	pprof "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// FromPprof converts a pprof profile to OTLP, as the OTLP profiles
// signal maps pprof: one OTLP profile per sample type, in order, sharing
// one dictionary; resource service.name app and service.version build,
// attribute flamediff.run on each profile (when run is not "").
func FromPprof(src *pprof.Profile, app, build, run string) pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := &dict{ProfilesDictionary: pd.Dictionary(), strs: map[string]int32{}}
	d.str("")
	d.MappingTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.LinkTable().AppendEmpty()

	mappings := map[*pprof.Mapping]int32{}
	for _, m := range src.Mapping {
		mappings[m] = index(d.MappingTable().Len())
		om := d.MappingTable().AppendEmpty()
		om.SetMemoryStart(m.Start)
		om.SetMemoryLimit(m.Limit)
		om.SetFileOffset(m.Offset)
		om.SetFilenameStrindex(d.str(m.File))
	}
	functions := map[*pprof.Function]int32{}
	for _, f := range src.Function {
		functions[f] = index(d.FunctionTable().Len())
		of := d.FunctionTable().AppendEmpty()
		of.SetNameStrindex(d.str(f.Name))
		of.SetSystemNameStrindex(d.str(f.SystemName))
		of.SetFilenameStrindex(d.str(f.Filename))
		of.SetStartLine(f.StartLine)
	}
	locations := map[*pprof.Location]int32{}
	for _, l := range src.Location {
		locations[l] = index(d.LocationTable().Len())
		ol := d.LocationTable().AppendEmpty()
		ol.SetAddress(l.Address)
		if l.Mapping != nil {
			ol.SetMappingIndex(mappings[l.Mapping])
		}
		for _, line := range l.Line {
			ln := ol.Lines().AppendEmpty()
			if line.Function != nil {
				ln.SetFunctionIndex(functions[line.Function])
			}
			ln.SetLine(line.Line)
		}
	}
	stacks := map[string]int32{}
	stackOf := func(s *pprof.Sample) int32 {
		key := fmt.Sprint(s.Location)
		if i, ok := stacks[key]; ok {
			return i
		}
		i := index(d.StackTable().Len())
		st := d.StackTable().AppendEmpty()
		for _, l := range s.Location {
			st.LocationIndices().Append(locations[l])
		}
		stacks[key] = i
		return i
	}

	rp := pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", app)
	rp.Resource().Attributes().PutStr("service.version", build)
	sp := rp.ScopeProfiles().AppendEmpty()
	var runAttr int32
	if run != "" {
		runAttr = index(d.AttributeTable().Len())
		kv := d.AttributeTable().AppendEmpty()
		kv.SetKeyStrindex(d.str("flamediff.run"))
		kv.Value().SetStr(run)
	}
	for vi, st := range src.SampleType {
		prof := sp.Profiles().AppendEmpty()
		prof.SampleType().SetTypeStrindex(d.str(st.Type))
		prof.SampleType().SetUnitStrindex(d.str(st.Unit))
		prof.SetTime(pcommon.Timestamp(src.TimeNanos))  // #nosec G115 -- a pprof time, after 1970
		prof.SetDurationNano(uint64(src.DurationNanos)) // #nosec G115 -- a pprof duration, not negative
		prof.SetPeriod(src.Period)
		if run != "" {
			prof.AttributeIndices().Append(runAttr)
		}
		for _, s := range src.Sample {
			os := prof.Samples().AppendEmpty()
			os.SetStackIndex(stackOf(s))
			os.Values().Append(s.Value[vi])
		}
	}
	return pd
}

// index is the index of the next row of a dictionary table of n rows.
func index(n int) int32 {
	return int32(n) // #nosec G115 -- the tables of the tests' profiles are far below 2^31 rows
}

type dict struct {
	pprofile.ProfilesDictionary
	strs map[string]int32
}

func (d *dict) str(s string) int32 {
	if i, ok := d.strs[s]; ok {
		return i
	}
	i := index(d.StringTable().Len())
	d.StringTable().Append(s)
	d.strs[s] = i
	return i
}

// SmallPprof is a profile of two sample types, two functions with file and
// line and an address without either: the seed of the fuzz targets, whose
// mutations of a large profile would be slow to run.
func SmallPprof() *pprof.Profile {
	src := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Mapping:    []*pprof.Mapping{{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/bin/app"}},
		Function:   []*pprof.Function{{ID: 1, Name: "main", Filename: "main.go"}, {ID: 2, Name: "work", Filename: "work.go"}},
	}
	src.Location = []*pprof.Location{
		{ID: 1, Mapping: src.Mapping[0], Address: 0x1010, Line: []pprof.Line{{Function: src.Function[0], Line: 3}}},
		{ID: 2, Mapping: src.Mapping[0], Address: 0x2020, Line: []pprof.Line{{Function: src.Function[1], Line: 9}}},
		{ID: 3, Mapping: src.Mapping[0], Address: 0x3030},
	}
	src.Sample = []*pprof.Sample{
		{Location: []*pprof.Location{src.Location[1], src.Location[0]}, Value: []int64{2, 20}},
		{Location: []*pprof.Location{src.Location[2], src.Location[0]}, Value: []int64{1, 10}},
	}
	return src
}

// ReadPprof reads a pprof file as pkg/ingest reads it before converting
// (drop_frames and keep_frames applied), and returns its bytes too.
func ReadPprof(t testing.TB, path string) (*pprof.Profile, []byte) {
	t.Helper()
	data, err := os.ReadFile(path) // #nosec G304 -- a test names its testdata file
	if err != nil {
		t.Fatal(err)
	}
	src, err := pprof.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.RemoveUninteresting(); err != nil {
		t.Fatal(err)
	}
	return src, data
}

// Encodings marshals pd as a Collector or SDK sends it: "protobuf" and
// "json".
func Encodings(t testing.TB, pd pprofile.Profiles) map[string][]byte {
	t.Helper()
	pb, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	js, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"protobuf": pb, "json": js}
}
