package plugin

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

// Errors of the plugin's own making that callers classify.
var (
	// errBusy: the data source runs as many queries as it may (maxQueries)
	// and this one waited its turn in vain.
	errBusy = errors.New("busy")
	// errBadRequest wraps a mistake in what the caller sent.
	errBadRequest = errors.New("bad request")
)

// ClickHouse exception codes that are not the server failing.
const (
	chTimeoutExceeded     = 159 // TIMEOUT_EXCEEDED: max_execution_time
	chTooManyQueries      = 202 // TOO_MANY_SIMULTANEOUS_QUERIES
	chQueryWasCancelled   = 394 // QUERY_WAS_CANCELLED
	chSocketTimeout       = 209 // SOCKET_TIMEOUT
	chNetworkError        = 210 // NETWORK_ERROR
	chAllConnectionsTried = 279 // ALL_CONNECTION_TRIES_FAILED
	// The data source's own SQL names only Flamediff's tables and columns:
	// one the server lacks means tables older than the plugin (or a
	// table setting naming the wrong one).
	chNoSuchColumn      = 16 // NO_SUCH_COLUMN_IN_TABLE
	chUnknownIdentifier = 47 // UNKNOWN_IDENTIFIER: "Missing columns" on current servers too
	chUnknownTable      = 60 // UNKNOWN_TABLE
)

// failure is how a failed call is answered: the same cause gets the same
// status from QueryData and CallResource.
type failure struct {
	status int
	msg    string
	// downstream: the cause is ClickHouse, the network or the user, not a
	// plugin bug (Grafana's error source).
	downstream bool
}

// userErrors are what the query or request asked for wrong, with their status.
var userErrors = []struct {
	target error
	status int
}{
	{storage.ErrUnknownApp, http.StatusNotFound},
	{storage.ErrUnknownBuild, http.StatusNotFound},
	{storage.ErrUnknownRun, http.StatusNotFound},
	{storage.ErrNoRuns, http.StatusNotFound},
	{errBadRequest, http.StatusBadRequest},
	{storage.ErrTooManyRows, http.StatusBadRequest},
	{query.ErrTooBig, http.StatusBadRequest},
	{query.ErrMismatch, http.StatusBadRequest},
	{query.ErrUnknownFunction, http.StatusBadRequest},
	{query.ErrUnknownFocus, http.StatusBadRequest},
	{query.ErrNoFunction, http.StatusBadRequest},
}

// classify decides the status of err, which ended a call whose context is
// ctx. The order matters: a deadline shows up as a network timeout too,
// and a busy pool as a deadline of the driver's own.
func classify(ctx context.Context, err error) failure {
	msg := err.Error()
	for _, u := range userErrors {
		if errors.Is(err, u.target) {
			return failure{u.status, msg, true}
		}
	}
	var ex *clickhouse.Exception
	var netErr net.Error
	isEx := errors.As(err, &ex)
	switch {
	case errors.Is(err, query.ErrInternal):
		var p *query.Panic
		if errors.As(err, &p) {
			log.DefaultLogger.Error("panic", "panic", p.Value, "stack", string(p.Stack))
		}
		return failure{http.StatusInternalServerError, msg, false}
	case errors.Is(err, errBusy), errors.Is(err, clickhouse.ErrAcquireConnTimeout), isEx && ex.Code == chTooManyQueries:
		if !errors.Is(err, errBusy) { // errBusy's own text starts with "busy"
			msg = "busy: " + msg
		}
		return failure{http.StatusServiceUnavailable, msg + " (try again shortly, or raise maxQueries and maxConnections in the data source settings)", true}
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		isEx && (ex.Code == chTimeoutExceeded || ex.Code == chSocketTimeout), errors.As(err, &netErr) && netErr.Timeout():
		return failure{http.StatusGatewayTimeout, "timed out (raise queryTimeout in the data source settings or select fewer runs): " + msg, true}
	case errors.Is(ctx.Err(), context.Canceled), errors.Is(err, context.Canceled), isEx && ex.Code == chQueryWasCancelled:
		return failure{http.StatusBadRequest, "cancelled: " + msg, true}
	case isEx && (ex.Code == chNetworkError || ex.Code == chAllConnectionsTried), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, clickhouse.ErrConnectionClosed):
		return failure{http.StatusBadGateway, "ClickHouse unreachable or connection lost: " + msg, true}
	case storage.NoDatabase(err):
		return failure{http.StatusBadGateway, "ClickHouse: " + msg + " (the data source's database does not exist: run `flamediff migrate`)", true}
	case isEx && (ex.Code == chNoSuchColumn || ex.Code == chUnknownIdentifier || ex.Code == chUnknownTable):
		return failure{http.StatusBadGateway, "ClickHouse: " + msg +
			" (Flamediff's tables lack what this version reads: run `flamediff migrate`, or check the data source's table names)", true}
	case isEx, errors.Is(err, storage.ErrMissingFrame):
		return failure{http.StatusBadGateway, "ClickHouse: " + msg, true}
	}
	return failure{http.StatusInternalServerError, "internal error: " + msg, false}
}

// Status is the HTTP status and message a failed call answers with, for
// servers other than Grafana's (flamediff serve).
func Status(ctx context.Context, err error) (int, string) {
	f := classify(ctx, err)
	return f.status, f.msg
}

// dataResponse is the QueryData answer of a failure.
func (f failure) dataResponse() backend.DataResponse {
	src := backend.ErrorSourcePlugin
	if f.downstream {
		src = backend.ErrorSourceDownstream
	}
	return backend.ErrDataResponseWithSource(backend.Status(f.status), src, f.msg)
}
