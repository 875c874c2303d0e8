package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

// The resources' JSON answers. Objects carry their name under "name" so
// that the editors' pickers and template variables read them alike.
type (
	buildInfo struct {
		Name string    `json:"name"`
		Time time.Time `json:"time"`
		Runs int       `json:"runs"`
	}
	runInfo struct {
		Name       string            `json:"name"`
		Build      string            `json:"build"`
		Start      time.Time         `json:"start"`
		Duration   float64           `json:"duration"` // seconds
		Commit     string            `json:"commit,omitempty"`
		Branch     string            `json:"branch,omitempty"`
		Labels     map[string]string `json:"labels,omitempty"`
		SampleType string            `json:"sampleType"`
		Unit       string            `json:"unit"`
		Total      int64             `json:"total"`
	}
)

// ResourceTimeout bounds a resource call (and queryTimeout, when
// shorter): pickers must not hang on a frozen server.
const ResourceTimeout = 10 * time.Second

// newResources serves the data source's resources over CallResource.
func newResources(d *Datasource) backend.CallResourceHandler {
	return httpadapter.New(Resources(d.store, min(ResourceTimeout, d.settings.QueryTimeoutDuration())))
}

// Resources routes GET apps, builds?app=, runs?app=&build= (build
// repeatable, optional) and functions?app=&q=[&limit=] to store: the data
// source's resources, also served by `flamediff serve`. Parameters are
// checked like query fields; every call ends within timeout.
func Resources(store *storage.Store, timeout time.Duration) http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, f func(ctx context.Context, p url.Values) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			v, err := query.Guard(ctx, func(ctx context.Context) (any, error) { return f(ctx, r.URL.Query()) })
			if err != nil {
				f := classify(ctx, err)
				writeJSON(w, f.status, errorBody(f.msg))
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
	}
	handle("GET /apps", func(ctx context.Context, _ url.Values) (any, error) {
		apps, err := store.Apps(ctx)
		return nonNil(apps), err
	})
	handle("GET /builds", func(ctx context.Context, p url.Values) (any, error) {
		app, err := param(p, "app", true)
		if err != nil {
			return nil, err
		}
		builds, err := store.Builds(ctx, app)
		out := make([]buildInfo, len(builds))
		for i, b := range builds {
			out[i] = buildInfo{Name: b.Name, Time: b.Time, Runs: b.Runs}
		}
		return out, err
	})
	handle("GET /runs", func(ctx context.Context, p url.Values) (any, error) {
		app, err := param(p, "app", true)
		if err != nil {
			return nil, err
		}
		for _, b := range p["build"] {
			if err := query.CheckName("build", b); err != nil {
				return nil, fmt.Errorf("%w: %w", errBadRequest, err)
			}
		}
		runs, err := store.Runs(ctx, app, p["build"], nil)
		out := make([]runInfo, len(runs))
		for i, run := range runs {
			out[i] = runInfo{Name: run.Run, Build: run.Build, Start: run.Start, Duration: run.Duration.Seconds(),
				Commit: run.Commit, Branch: run.Branch, Labels: run.Labels, SampleType: run.SampleType,
				Unit: run.Unit, Total: run.Total}
		}
		return out, err
	})
	handle("GET /functions", func(ctx context.Context, p url.Values) (any, error) {
		app, err := param(p, "app", true)
		if err != nil {
			return nil, err
		}
		q, err := param(p, "q", false)
		if err != nil {
			return nil, err
		}
		limit := 0
		if l := p.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n < 1 || n > storage.MaxSearchLimit {
				return nil, fmt.Errorf("%w: limit must be a number from 1 to %d, not %q", errBadRequest, storage.MaxSearchLimit, l)
			}
			limit = n
		}
		names, err := store.SearchFunctions(ctx, app, q, limit)
		return nonNil(names), err
	})
	return mux
}

// param reads a query parameter and checks it like a query's names.
func param(p url.Values, name string, required bool) (string, error) {
	v := p.Get(name)
	if v == "" {
		if required {
			return "", fmt.Errorf("%w: missing query parameter %s", errBadRequest, name)
		}
		return "", nil
	}
	if err := query.CheckName(name, v); err != nil {
		return "", fmt.Errorf("%w: %w", errBadRequest, err)
	}
	return v, nil
}

// nonNil makes an empty listing encode as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type errorJSON struct {
	Error string `json:"error"`
}

func errorBody(msg string) errorJSON { return errorJSON{Error: msg} }

// jsonError is errorBody encoded, for answers sent without a ResponseWriter.
func jsonError(msg string) []byte {
	b, _ := json.Marshal(errorBody(msg)) // a struct of one string always encodes
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do then
}
