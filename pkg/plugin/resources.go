package plugin

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

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

// Resources routes GET /apps, /builds?app=, /runs?app=&build= (build
// repeatable, optional) and /functions?app=&q=[&limit=] to store: the data
// source's resources, also served by `flamediff serve`.
func Resources(store *storage.Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apps", func(w http.ResponseWriter, r *http.Request) {
		apps, err := store.Apps(r.Context())
		reply(w, apps, err)
	})
	mux.HandleFunc("GET /builds", func(w http.ResponseWriter, r *http.Request) {
		app, ok := required(w, r, "app")
		if !ok {
			return
		}
		builds, err := store.Builds(r.Context(), app)
		out := make([]buildInfo, len(builds))
		for i, b := range builds {
			out[i] = buildInfo{Name: b.Name, Time: b.Time, Runs: b.Runs}
		}
		reply(w, out, err)
	})
	mux.HandleFunc("GET /runs", func(w http.ResponseWriter, r *http.Request) {
		app, ok := required(w, r, "app")
		if !ok {
			return
		}
		runs, err := store.Runs(r.Context(), app, r.URL.Query()["build"], nil)
		out := make([]runInfo, len(runs))
		for i, run := range runs {
			out[i] = runInfo{Name: run.Run, Build: run.Build, Start: run.Start, Duration: run.Duration.Seconds(),
				Commit: run.Commit, Branch: run.Branch, Labels: run.Labels, SampleType: run.SampleType,
				Unit: run.Unit, Total: run.Total}
		}
		reply(w, out, err)
	})
	mux.HandleFunc("GET /functions", func(w http.ResponseWriter, r *http.Request) {
		app, ok := required(w, r, "app")
		if !ok {
			return
		}
		limit := 0
		if l := r.URL.Query().Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, errorBody("limit must be a number"))
				return
			}
			limit = n
		}
		names, err := store.SearchFunctions(r.Context(), app, r.URL.Query().Get("q"), limit)
		reply(w, names, err)
	})
	return mux
}

// required reads a mandatory query parameter, answering 400 without it.
func required(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		writeJSON(w, http.StatusBadRequest, errorBody("missing query parameter "+name))
	}
	return v, v != ""
}

// reply writes v as JSON, or the error with the status it deserves.
func reply(w http.ResponseWriter, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.Is(err, storage.ErrUnknownApp), errors.Is(err, storage.ErrUnknownBuild),
		errors.Is(err, storage.ErrUnknownRun), errors.Is(err, storage.ErrNoRuns):
		writeJSON(w, http.StatusNotFound, errorBody(err.Error()))
	default:
		writeJSON(w, http.StatusBadGateway, errorBody("ClickHouse: "+err.Error()))
	}
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
