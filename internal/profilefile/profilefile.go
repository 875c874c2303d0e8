// Package profilefile reads profile files from disk, for the command-line
// tool and the tests. The plugin's own code under pkg/ never touches the
// file system (Grafana's plugin validator rejects any file access there):
// it parses what ClickHouse and HTTP requests hand it.
package profilefile

import (
	"os"

	"github.com/flamediff/flamediff/pkg/ingest"
	"github.com/flamediff/flamediff/pkg/profile"
)

// Parse parses the profile file at path with o, naming it by path in
// errors.
func Parse(path string, o ingest.Options) (*profile.Profile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return o.Parse(file, path)
}
