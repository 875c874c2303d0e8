// Package plugin is Flamediff's Grafana glue: it turns data source settings
// into a pooled ClickHouse store, answers QueryData through pkg/query's
// executor, reports health and serves the editors' resources.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/flamediff/flamediff/pkg/loader"
	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
	"github.com/flamediff/flamediff/pkg/sysframes"
)

// stackCacheBytes is about what a full stack cache holds
// (loader.DefaultCacheFrames).
const stackCacheBytes = 256 << 20

// ID is the data source's plugin id (src/datasource/plugin.json).
const ID = "flamediff-clickhouse-datasource"

// Datasource is one configured Flamediff data source. Grafana creates one
// per settings version and disposes it when the settings change, which
// closes its connection pool.
type Datasource struct {
	settings  Settings
	store     *storage.Store
	exec      *query.Executor
	resources backend.CallResourceHandler
	gate      *gate
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
	d.gate = newGate(s.MaxQueries, s.QueueTimeoutDuration())
	budgets.claim(d, int64(s.MaxQueries)*s.QueryMemory()+stackCacheBytes)
	d.exec = &query.Executor{Store: store, Rules: rules, Stacks: loader.NewCache(0), MaxMemory: s.QueryMemory()}
	return nil
}

// Dispose closes the connection pool and gives the instance's memory
// budget back.
func (d *Datasource) Dispose() {
	budgets.release(d)
	if d.store != nil {
		if err := d.store.Close(); err != nil {
			log.DefaultLogger.Warn("closing ClickHouse connections", "error", err)
		}
	}
}

// QueryData answers each query on its own: one failing query gives that
// query an error response and leaves the others intact. The instance's
// gate, not the request, bounds how many run at once.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, q := range req.Queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := d.query(ctx, q)
			mu.Lock()
			resp.Responses[q.RefID] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return resp, nil
}

// query runs one query when the gate lets it, within the configured
// timeout.
func (d *Datasource) query(ctx context.Context, q backend.DataQuery) backend.DataResponse {
	if d.setupErr != nil {
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream,
			"data source settings: "+d.setupErr.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, d.settings.QueryTimeoutDuration())
	defer cancel()
	var waiting atomic.Bool
	// The deadline counts the wait for a turn: the call returns when it
	// passes, waiting or running (the executor's pipeline guards the run).
	frames, err := query.Guard(ctx, func(ctx context.Context) (data.Frames, error) {
		m, err := query.Parse(q.JSON)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errBadRequest, err)
		}
		leave, err := d.gate.enter(ctx, &waiting)
		if err != nil {
			return nil, err
		}
		defer leave()
		return d.exec.Execute(ctx, m, query.Range{From: q.TimeRange.From, To: q.TimeRange.To})
	})
	// A query whose deadline passed while it waited for its turn never ran:
	// busy (503), whichever of the gate and Guard saw the deadline first.
	if err != nil && waiting.Load() && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = d.gate.late()
	}
	if err != nil {
		return classify(ctx, err).dataResponse()
	}
	for _, f := range frames {
		f.RefID = q.RefID
	}
	return backend.DataResponse{Frames: frames}
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
