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
		mappings[m] = int32(d.MappingTable().Len())
		om := d.MappingTable().AppendEmpty()
		om.SetMemoryStart(m.Start)
		om.SetMemoryLimit(m.Limit)
		om.SetFileOffset(m.Offset)
		om.SetFilenameStrindex(d.str(m.File))
	}
	functions := map[*pprof.Function]int32{}
	for _, f := range src.Function {
		functions[f] = int32(d.FunctionTable().Len())
		of := d.FunctionTable().AppendEmpty()
		of.SetNameStrindex(d.str(f.Name))
		of.SetSystemNameStrindex(d.str(f.SystemName))
		of.SetFilenameStrindex(d.str(f.Filename))
		of.SetStartLine(f.StartLine)
	}
	locations := map[*pprof.Location]int32{}
	for _, l := range src.Location {
		locations[l] = int32(d.LocationTable().Len())
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
		i := int32(d.StackTable().Len())
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
		runAttr = int32(d.AttributeTable().Len())
		kv := d.AttributeTable().AppendEmpty()
		kv.SetKeyStrindex(d.str("flamediff.run"))
		kv.Value().SetStr(run)
	}
	for vi, st := range src.SampleType {
		prof := sp.Profiles().AppendEmpty()
		prof.SampleType().SetTypeStrindex(d.str(st.Type))
		prof.SampleType().SetUnitStrindex(d.str(st.Unit))
		prof.SetTime(pcommon.Timestamp(src.TimeNanos))
		prof.SetDurationNano(uint64(src.DurationNanos))
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

type dict struct {
	pprofile.ProfilesDictionary
	strs map[string]int32
}

func (d *dict) str(s string) int32 {
	if i, ok := d.strs[s]; ok {
		return i
	}
	i := int32(d.StringTable().Len())
	d.StringTable().Append(s)
	d.strs[s] = i
	return i
}

// ReadPprof reads a pprof file as pkg/ingest reads it before converting
// (drop_frames and keep_frames applied), and returns its bytes too.
func ReadPprof(t testing.TB, path string) (*pprof.Profile, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
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
