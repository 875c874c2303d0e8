package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/web/guard"
)

// maxQueryBytes bounds a query model's body; real ones are a few hundred bytes.
const maxQueryBytes = 1 << 20

// Handler serves the local web UI: GET / the page, POST /api/query a query
// model answered with its frames (as `flamediff query --output json`
// prints them), GET /api/resources/... the data source's resources.
// status gives a failed query's HTTP status and message, as the data
// source classifies it. g checks every request (Host, token) and the API's
// origin and content type.
func Handler(exec *query.Executor, resources http.Handler, status func(context.Context, error) (int, string), g *guard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = writeServePage(w) // the client may be gone; nothing to do then
	})
	mux.Handle("POST /api/query", g.Data(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxQueryBytes))
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		m, err := query.Parse(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		frames, err := exec.Execute(r.Context(), m, query.Range{})
		switch {
		case err == nil:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(frames)
		case errors.Is(r.Context().Err(), context.Canceled): // the page went away
		default:
			code, msg := status(r.Context(), err)
			writeError(w, code, errors.New(msg))
		}
	})))
	mux.Handle("/api/resources/", g.Data(http.StripPrefix("/api/resources", resources)))
	return g.Site(mux)
}

func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
