package receiver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flamediff/flamediff/pkg/ingest"
)

// The write-ahead log keeps the spans the receiver acknowledged until
// their runs are stored: a request's spans are appended and fsync'd
// before its 200, and replayed at start. It is a directory of numbered
// segments, each a sequence of records: the payload's length and CRC-32C
// (4 bytes each, big-endian), then the payload, gob-encoded. A record is
// a request's spans or a mark naming the runs a commit stored, so that a
// replay neither stores a stored run again from part of its spans nor
// takes its late spans for a new run. Segments are removed oldest first,
// once no pending run holds spans in them; as a mark is written after
// the spans it covers, a segment holding a run's spans is never removed
// before the segment holding its mark.
type wal struct {
	dir string

	mu   sync.Mutex
	f    *os.File
	seg  uint64         // the segment appended to
	size int64          // its size
	refs map[uint64]int // per segment: pending runs, and requests being taken, that hold spans in it
	base uint64         // the oldest segment not removed
}

// walRecord is a record's payload: spans, or the keys of stored runs.
type walRecord struct {
	Spans  []ingest.OTLPSpan
	Stored []string
}

// segmentBytes is the size past which the log starts a segment.
const segmentBytes = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func segmentName(n uint64) string { return fmt.Sprintf("%016d.wal", n) }

// openWAL opens the log in dir, creating it, and calls replay with every
// record it holds, oldest first, with its segment. A torn last record (a
// crash while appending, before any answer) ends its segment.
func openWAL(dir string, replay func(seg uint64, rec walRecord)) (*wal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("write-ahead log: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("write-ahead log: %w", err)
	}
	var segs []uint64
	for _, e := range entries {
		if n, err := strconv.ParseUint(strings.TrimSuffix(e.Name(), ".wal"), 10, 64); err == nil && strings.HasSuffix(e.Name(), ".wal") {
			segs = append(segs, n)
		}
	}
	slices.Sort(segs)
	w := &wal{dir: dir, refs: map[uint64]int{}}
	for _, n := range segs {
		if err := w.read(n, replay); err != nil {
			return nil, err
		}
	}
	if len(segs) > 0 {
		w.base, w.seg = segs[0], segs[len(segs)-1]+1
	}
	if err := w.create(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *wal) read(n uint64, replay func(uint64, walRecord)) error {
	path := filepath.Join(w.dir, segmentName(n))
	f, err := os.Open(path) // #nosec G304 -- a segment of our own directory
	if err != nil {
		return fmt.Errorf("write-ahead log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var head [8]byte
	for {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return nil // the end, or a torn header
		}
		payload := make([]byte, binary.BigEndian.Uint32(head[:4]))
		if _, err := io.ReadFull(br, payload); err != nil || crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(head[4:]) {
			return nil // a torn record: never acknowledged
		}
		var rec walRecord
		if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&rec); err != nil {
			return fmt.Errorf("write-ahead log %s: a record that checks but does not decode: %w", path, err)
		}
		replay(n, rec)
	}
}

func (w *wal) create() error {
	f, err := os.OpenFile(filepath.Join(w.dir, segmentName(w.seg)), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("write-ahead log: %w", err)
	}
	w.f, w.size = f, 0
	return syncDir(w.dir)
}

// syncDir makes a created or removed file's name durable.
func syncDir(dir string) error {
	d, err := os.Open(dir) // #nosec G304 -- our own directory
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// append writes rec and fsyncs it. It returns the segment, held once for
// the caller, who releases it once pending runs hold what they need.
func (w *wal) append(rec walRecord) (uint64, error) {
	var buf bytes.Buffer
	buf.Write(make([]byte, 8))
	if err := gob.NewEncoder(&buf).Encode(rec); err != nil {
		return 0, err
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[:4], uint32(len(b)-8)) // #nosec G115 -- a request is at most MaxBodyBytes
	binary.BigEndian.PutUint32(b[4:8], crc32.Checksum(b[8:], crcTable))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.size > segmentBytes {
		if err := w.f.Close(); err != nil {
			return 0, err
		}
		w.seg++
		if err := w.create(); err != nil {
			return 0, err
		}
		w.trim()
	}
	if _, err := w.f.Write(b); err != nil {
		return 0, fmt.Errorf("write-ahead log: %w", err)
	}
	w.size += int64(len(b))
	if err := w.f.Sync(); err != nil {
		return 0, fmt.Errorf("write-ahead log: %w", err)
	}
	w.refs[w.seg]++
	return w.seg, nil
}

// hold and release count a segment's holders; release removes the
// segments no one holds, oldest first.
func (w *wal) hold(seg uint64) {
	w.mu.Lock()
	w.refs[seg]++
	w.mu.Unlock()
}

func (w *wal) release(seg uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refs[seg]--; w.refs[seg] <= 0 {
		delete(w.refs, seg)
	}
	w.trim()
}

// trim removes the oldest segments that no one holds, up to the one
// appended to. Called with mu held.
func (w *wal) trim() {
	for ; w.base < w.seg && w.refs[w.base] == 0; w.base++ {
		if err := os.Remove(filepath.Join(w.dir, segmentName(w.base))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return // kept: replayed again at the next start, which is harmless
		}
	}
}

// bytes is the log's size on disk.
func (w *wal) bytes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(w.seg-w.base)*segmentBytes + w.size // #nosec G115 -- a few segments; the full ones roughly
}

func (w *wal) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}
