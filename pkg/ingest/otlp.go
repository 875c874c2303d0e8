package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// messages splits a file into its OTLP messages, each with whether it is
// JSON: a gzipped file is inflated first; text is JSON, one message or a
// stream of them (the Collector file exporter writes one a line); binary is
// one protobuf message, or the file exporter's stream of messages each
// after its length in 4 big-endian bytes (a message starts with a field
// tag, never 0).
func otlpMessages(data []byte, limit int64) ([][]byte, bool, error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		var err error
		if data, err = Gunzip(data, limit); err != nil {
			return nil, false, err
		}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return nil, false, errors.New("empty file")
	case trimmed[0] == '{':
		var out [][]byte
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var m json.RawMessage
			if err := dec.Decode(&m); err == io.EOF {
				return out, true, nil
			} else if err != nil {
				return nil, true, fmt.Errorf("message %d: %w", len(out)+1, err)
			}
			out = append(out, m)
		}
	case data[0] == 0:
		var out [][]byte
		for off := 0; off < len(data); {
			if len(data)-off < 4 {
				return nil, false, fmt.Errorf("offset %d: truncated length prefix", off)
			}
			n := int(binary.BigEndian.Uint32(data[off:]))
			off += 4
			if n > len(data)-off {
				return nil, false, fmt.Errorf("offset %d: message of %d bytes, %d left", off-4, n, len(data)-off)
			}
			out = append(out, data[off:off+n])
			off += n
		}
		return out, false, nil
	}
	return [][]byte{data}, false, nil
}

// DecodeOTLPProfiles reads the OTLP profiles of a file or a request body
// (see otlpMessages for the framings), each message first checked by
// CheckOTLPNesting; name identifies it in errors and limit bounds what a
// gzipped input inflates to (0 means MaxFileSize).
func DecodeOTLPProfiles(data []byte, name string, limit int64) ([]pprofile.Profiles, error) {
	return decodeOTLP(data, name, limit, "profiles", (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles,
		(&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles)
}

// DecodeOTLPTraces reads the OTLP traces of a file, as DecodeOTLPProfiles.
func DecodeOTLPTraces(data []byte, name string, limit int64) ([]ptrace.Traces, error) {
	return decodeOTLP(data, name, limit, "traces", (&ptrace.JSONUnmarshaler{}).UnmarshalTraces, (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces)
}

func decodeOTLP[T any](data []byte, name string, limit int64, what string, fromJSON, fromProto func([]byte) (T, error)) ([]T, error) {
	if limit <= 0 {
		limit = MaxFileSize
	}
	msgs, isJSON, err := otlpMessages(data, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	unmarshal := fromProto
	if isJSON {
		unmarshal = fromJSON
	}
	out := make([]T, len(msgs))
	for i, m := range msgs {
		// Before pdata, whose recursion a deep message would overflow.
		if err := CheckOTLPNesting(m, isJSON); err != nil {
			return nil, fmt.Errorf("%s: message %d: %w", name, i+1, err)
		}
		if out[i], err = unmarshal(m); err != nil {
			return nil, fmt.Errorf("%s: message %d: not OTLP %s: %w", name, i+1, what, err)
		}
	}
	return out, nil
}
