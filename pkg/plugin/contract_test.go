package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/storage"
)

// readRepo reads a file of the repository.
func readRepo(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every setting the backend reads (Settings' jsonData keys) is in the
// TypeScript options, can be set in the config editor, and is documented
// in docs/DATASOURCE.md; and those list no other.
func TestSettingsAgree(t *testing.T) {
	var keys []string
	rt := reflect.TypeOf(Settings{})
	for i := range rt.NumField() {
		if k := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]; k != "-" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)

	types := readRepo(t, "src/datasource/types.ts")
	body := regexp.MustCompile(`(?s)export interface FlamediffOptions extends DataSourceJsonData \{(.*?)\n\}`).FindStringSubmatch(types)
	if body == nil {
		t.Fatal("types.ts: no FlamediffOptions interface")
	}
	var ts []string
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)\??:`).FindAllStringSubmatch(body[1], -1) {
		ts = append(ts, m[1])
	}
	slices.Sort(ts)
	if !slices.Equal(ts, keys) {
		t.Errorf("FlamediffOptions has %v, Settings %v", ts, keys)
	}

	docs := readRepo(t, "docs/DATASOURCE.md")
	const header = "| jsonData | default | |"
	i := strings.Index(docs, header)
	if i < 0 {
		t.Fatalf("docs/DATASOURCE.md: no table with the header %q", header)
	}
	var documented []string
	for _, line := range strings.Split(docs[i:], "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			break
		}
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cells[1], -1) {
			documented = append(documented, m[1])
		}
	}
	slices.Sort(documented)
	if !slices.Equal(documented, keys) {
		t.Errorf("docs/DATASOURCE.md lists %v, Settings %v", documented, keys)
	}

	// The editor names each key it sets: set('key', ...), text('key', ...),
	// whole('key', ...), or reads json.key.
	editor := readRepo(t, "src/datasource/components/ConfigEditor.tsx")
	for _, k := range keys {
		if !strings.Contains(editor, "'"+k+"'") && !strings.Contains(editor, "json."+k) {
			t.Errorf("the config editor does not set %s", k)
		}
	}

	// The tables setting: storage.Tables' keys with their default names,
	// in the TypeScript Tables, the editor's list and the docs' row.
	var tables []string
	defaults := reflect.ValueOf(storage.DefaultTables)
	tt := defaults.Type()
	for i := range tt.NumField() {
		k := strings.Split(tt.Field(i).Tag.Get("json"), ",")[0]
		tables = append(tables, k)
		if pair := fmt.Sprintf("['%s', '%s']", k, defaults.Field(i).String()); !strings.Contains(editor, pair) {
			t.Errorf("the config editor's table list lacks %s", pair)
		}
		if doc := fmt.Sprintf("`%s` (`%s`)", k, defaults.Field(i).String()); k != defaults.Field(i).String() && !strings.Contains(docs, doc) {
			t.Errorf("docs/DATASOURCE.md's tables row lacks %s", doc)
		}
		if !strings.Contains(docs, "`"+k+"`") {
			t.Errorf("docs/DATASOURCE.md's tables row lacks %s", k)
		}
	}
	slices.Sort(tables)
	body = regexp.MustCompile(`(?s)export interface Tables \{(.*?)\n\}`).FindStringSubmatch(types)
	if body == nil {
		t.Fatal("types.ts: no Tables interface")
	}
	ts = nil
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)\??:`).FindAllStringSubmatch(body[1], -1) {
		ts = append(ts, m[1])
	}
	slices.Sort(ts)
	if !slices.Equal(ts, tables) {
		t.Errorf("the TypeScript Tables has %v, storage.Tables %v", ts, tables)
	}
}
