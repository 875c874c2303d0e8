package frames

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/evolution"
	"github.com/flamediff/flamediff/pkg/tree"
)

// TestPackageField: every node's package is the evolution matrix's package
// of its label, so the panel and the matrix group frames alike.
func TestPackageField(t *testing.T) {
	tr, err := builder("head java/lang/Thread.run;compress/flate.(*compressor).deflate;std::vector<int>::push_back(int&&) 5",
		"head java/lang/Thread.run;main.main 3").Build(tree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := packageField(tr)
	texts := f.Config.TypeConfig.Enum.Text
	want := map[string]string{"total": "", "java/lang/Thread.run": "java/lang", "main.main": "main",
		"compress/flate.(*compressor).deflate": "compress/flate", "std::vector<int>::push_back(int&&)": "std"}
	for i := range tr.Nodes {
		got := texts[f.At(i).(data.EnumItemIndex)]
		if w, _, _ := evolution.Split(tr.Label(i)); got != w || got != want[tr.Label(i)] {
			t.Errorf("node %d %q: package %q, want %q (evolution.Split %q)", i, tr.Label(i), got, want[tr.Label(i)], w)
		}
	}
}
