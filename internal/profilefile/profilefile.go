// Package profilefile reads profile files from disk, for the command-line
// tool and the tests. The plugin's own code under pkg/ never touches the
// file system (Grafana's plugin validator rejects any file access there):
// it parses what ClickHouse and HTTP requests hand it.
package profilefile

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
)

// Parse parses the profile file at path with o, naming it by path in
// errors.
func Parse(path string, o ingest.Options) (*profile.Profile, error) {
	return ParseShowing(path, o, nil)
}

// ParseShowing is Parse telling show, if not nil, how many bytes of the
// file's size it has read, at every read: for a progress bar.
func ParseShowing(path string, o ingest.Options, show func(read, size int64)) (*profile.Profile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if show == nil {
		return o.Parse(file, path)
	}
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	return o.Parse(&counting{r: file, size: info.Size(), show: show}, path)
}

// counting is a reader that tells show what it has read.
type counting struct {
	r          io.Reader
	read, size int64
	show       func(read, size int64)
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	c.show(c.read, c.size)
	return n, err
}

// maxSourceMap bounds a source map or a bundle read for its
// sourceMappingURL comment.
const maxSourceMap = 256 << 20

// SourceMaps returns ingest.Options.SourceMaps for scripts' maps on disk:
// in dir (if not ""), the map named as the script's file with ".map"
// (main-3F2A9C1B.js's main-3F2A9C1B.js.map); else, for a file:// script,
// the map its last `//# sourceMappingURL=` comment names (a path relative
// to the script, or an inline data: URL), else the script's file with
// ".map" beside it. A script with none has nil.
func SourceMaps(dir string) func(url string) ([]byte, error) {
	return func(script string) ([]byte, error) {
		u, err := url.Parse(script)
		if err != nil {
			return nil, nil // no URL: no file of ours names it
		}
		if dir != "" {
			if b, err := readMap(filepath.Join(dir, path.Base(u.Path)+".map")); b != nil || err != nil {
				return b, err
			}
		}
		if u.Scheme != "file" || u.Path == "" {
			return nil, nil
		}
		if ref, ok, err := mappingURL(u.Path); err != nil || ok {
			if err != nil {
				return nil, err
			}
			if data, ok := strings.CutPrefix(ref, "data:"); ok {
				return dataURL(data)
			}
			if r, err := url.Parse(ref); err == nil && r.Scheme == "" {
				return readMap(filepath.Join(filepath.Dir(u.Path), filepath.FromSlash(r.Path)))
			}
			return nil, nil
		}
		return readMap(u.Path + ".map")
	}
}

// readMap reads a map file; nil, nil if there is none.
func readMap(file string) ([]byte, error) {
	f, err := os.Open(file) // #nosec G304 -- a map the user's profile or flag names
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSourceMap+1))
	if err == nil && len(b) > maxSourceMap {
		err = fmt.Errorf("%s: larger than %d bytes", file, maxSourceMap)
	}
	return b, err
}

// mappingURL returns the URL of a script's last sourceMappingURL comment
// (`//# sourceMappingURL=` or the older `//@`), if the script exists and
// has one.
func mappingURL(script string) (string, bool, error) {
	b, err := readMap(script)
	if b == nil || err != nil {
		return "", false, err
	}
	i := max(bytes.LastIndex(b, []byte("//# sourceMappingURL=")), bytes.LastIndex(b, []byte("//@ sourceMappingURL=")))
	if i < 0 {
		return "", false, nil
	}
	ref := b[i+len("//# sourceMappingURL="):]
	if j := bytes.IndexAny(ref, "\r\n \t"); j >= 0 {
		ref = ref[:j]
	}
	return string(ref), len(ref) > 0, nil
}

// dataURL decodes the part after "data:" of an inline map.
func dataURL(data string) ([]byte, error) {
	meta, body, ok := strings.Cut(data, ",")
	if !ok {
		return nil, errors.New("an inline source map without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(body)
	}
	s, err := url.PathUnescape(body)
	return []byte(s), err
}
