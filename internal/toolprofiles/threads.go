package toolprofiles

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os/exec"
)

// JFRThreads counts the execution samples (jdk.ExecutionSample) of each
// sampled thread, by its Java name (else its OS name), as the JDK's `jfr
// print --json` gives them.
func JFRThreads(file string) (map[string]int64, error) {
	out, err := exec.Command("jfr", "print", "--json", "--events", "jdk.ExecutionSample", file).Output() // #nosec G204 -- the tests' own tools
	if err != nil {
		return nil, fmt.Errorf("jfr print: %v", err)
	}
	var doc struct {
		Recording struct {
			Events []struct {
				Values struct {
					SampledThread struct{ JavaName, OSName string }
					StackTrace    *struct{ Frames []json.RawMessage }
				}
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, e := range doc.Recording.Events {
		if v := e.Values; v.StackTrace != nil && len(v.StackTrace.Frames) > 0 {
			counts[cmp.Or(v.SampledThread.JavaName, v.SampledThread.OSName)]++
		}
	}
	return counts, nil
}
