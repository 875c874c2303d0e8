package ingest

// traceEventText is an event as the file writes it, what the reader reads
// of it: its strings and raw values are their text in the window read
// (pid, tid and ids any JSON value, args too), read as encoding/json
// decodes the event into a struct of these fields (string fields, float64
// ts and dur, json.RawMessage values): keys matched but for case, the
// last given winning, null leaving a string, a number or id2 as it was,
// other keys skipped.
type traceEventText struct {
	ph, name, cat, scope              jsonText
	pid, tid, id, local, global, args []byte
	ts, dur                           float64
}

// decodeTraceEvent reads the event (an object, or null: an event of no
// fields) at v.i into e.
func decodeTraceEvent(v *jsonWindow, e *traceEventText) error {
	*e = traceEventText{}
	var lower [8]byte
	return v.objectOrNull("a trace event", 1, func(key []byte, plain bool) error {
		var err error
		switch string(foldKey(key, plain, &lower)) {
		case "ph":
			return v.text(&e.ph, "ph", 2)
		case "name":
			return v.text(&e.name, "name", 2)
		case "cat":
			return v.text(&e.cat, "cat", 2)
		case "scope":
			return v.text(&e.scope, "scope", 2)
		case "pid":
			e.pid, err = v.skip(2)
		case "tid":
			e.tid, err = v.skip(2)
		case "id":
			e.id, err = v.skip(2)
		case "args":
			e.args, err = v.skip(2)
		case "id2":
			return decodeTraceID2(v, e)
		case "ts":
			return v.float(&e.ts, "ts", 2)
		case "dur":
			return v.float(&e.dur, "dur", 2)
		default:
			_, err = v.skip(2)
		}
		return err
	})
}

// decodeTraceID2 reads id2, an object whose local and global are read
// (into what an id2 before gave, as encoding/json decodes into a struct)
// or null.
func decodeTraceID2(v *jsonWindow, e *traceEventText) error {
	var lower [8]byte
	return v.objectOrNull("id2", 2, func(key []byte, plain bool) error {
		var err error
		switch string(foldKey(key, plain, &lower)) {
		case "local":
			e.local, err = v.skip(3)
		case "global":
			e.global, err = v.skip(3)
		default:
			_, err = v.skip(3)
		}
		return err
	})
}
