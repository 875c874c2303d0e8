// Package plugin is Flamediff's Grafana glue: it turns data source settings
// into a pooled ClickHouse store, answers QueryData through pkg/query's
// executor, reports health and serves the editors' resources.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
)

// ID is the data source's plugin id (src/datasource/plugin.json).
const ID = "flamediff-clickhouse-datasource"

// maxConcurrentQueries bounds the queries of one request run at once: each
// holds a ClickHouse connection and an engine in memory.
const maxConcurrentQueries = 4

// Datasource is one configured Flamediff data source. Grafana creates one
// per settings version and disposes it when the settings change, which
// closes its connection pool.
type Datasource struct {
	settings  Settings
	store     *storage.Store
	exec      *query.Executor
	resources backend.CallResourceHandler
	// setupErr is a settings mistake; it is reported by CheckHealth and
	// every query rather than failing the instance, so users see it.
	setupErr error
}

var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ backend.CallResourceHandler   = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// NewDatasource creates a data source instance from Grafana's settings.
func NewDatasource(_ context.Context, in backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	d := &Datasource{}
	d.setupErr = d.setup(in)
	d.resources = newResources(d)
	return d, nil
}

func (d *Datasource) setup(in backend.DataSourceInstanceSettings) error {
	s, err := LoadSettings(in)
	if err != nil {
		return err
	}
	d.settings = s
	rules, err := sysframes.New(s.SystemFrames)
	if err != nil {
		return fmt.Errorf("system frame rules: %w", err)
	}
	opts, err := s.ClickHouseOptions()
	if err != nil {
		return err
	}
	store, err := storage.Open(storage.Options{
		ClickHouse: opts, Tables: s.Tables, Distributed: s.Distributed, MaxRows: s.MaxStacks,
	})
	if err != nil {
		return err
	}
	d.store = store
	d.exec = &query.Executor{Store: store, Rules: rules, Stacks: query.NewStackCache(0)}
	return nil
}

// Dispose closes the connection pool.
func (d *Datasource) Dispose() {
	if d.store != nil {
		if err := d.store.Close(); err != nil {
			log.DefaultLogger.Warn("closing ClickHouse connections", "error", err)
		}
	}
}

// QueryData answers each query on its own: one failing query gives that
// query an error response and leaves the others intact.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxConcurrentQueries)
	for _, q := range req.Queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			r := d.query(ctx, q)
			mu.Lock()
			resp.Responses[q.RefID] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return resp, nil
}

// query runs one query within the configured timeout; a panic becomes
// that query's error instead of killing the plugin process.
func (d *Datasource) query(ctx context.Context, q backend.DataQuery) (resp backend.DataResponse) {
	defer func() {
		if p := recover(); p != nil {
			log.DefaultLogger.Error("query panicked", "refId", q.RefID, "panic", p, "stack", string(debug.Stack()))
			resp = backend.ErrDataResponse(backend.StatusInternal, fmt.Sprintf("internal error: %v", p))
		}
	}()
	if d.setupErr != nil {
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream,
			"data source settings: "+d.setupErr.Error())
	}
	m, err := query.Parse(q.JSON)
	if err != nil {
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, d.settings.QueryTimeoutDuration())
	defer cancel()
	frames, err := d.exec.Execute(ctx, m, query.Range{From: q.TimeRange.From, To: q.TimeRange.To})
	if err != nil {
		return errorResponse(ctx, err)
	}
	for _, f := range frames {
		f.RefID = q.RefID
	}
	return backend.DataResponse{Frames: frames}
}

// errorResponse classifies a failed query: what the user asked for wrong,
// a timeout or cancellation, or a ClickHouse failure.
func errorResponse(ctx context.Context, err error) backend.DataResponse {
	status := backend.StatusBadGateway
	msg := err.Error()
	switch {
	case isUserError(err):
		status = backend.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		status, msg = backend.StatusTimeout, "query timed out (raise queryTimeout in the data source settings or select fewer runs): "+msg
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		status, msg = backend.StatusBadRequest, "query cancelled"
	default:
		msg = "ClickHouse: " + msg
	}
	return backend.ErrDataResponseWithSource(status, backend.ErrorSourceDownstream, msg)
}

// isUserError reports errors caused by what the query asked for.
func isUserError(err error) bool {
	for _, target := range []error{
		storage.ErrUnknownApp, storage.ErrUnknownBuild, storage.ErrUnknownRun, storage.ErrNoRuns,
		storage.ErrTooManyRows, query.ErrMismatch, query.ErrUnknownFunction, query.ErrUnknownFocus,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// CallResource serves the editors' pickers (see resources.go).
func (d *Datasource) CallResource(ctx context.Context, req *backend.CallResourceRequest, sender backend.CallResourceResponseSender) error {
	if d.setupErr != nil {
		return sender.Send(&backend.CallResourceResponse{
			Status: http.StatusBadRequest,
			Body:   jsonError("data source settings: " + d.setupErr.Error()),
		})
	}
	return d.resources.CallResource(ctx, req, sender)
}
