package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

// healthTimeout bounds CheckHealth so that "Save & test" answers within a
// few seconds even when the server is unreachable.
const healthTimeout = 5 * time.Second

// ClickHouse exception codes that mean the credentials were refused.
var authCodes = map[int32]bool{
	192: true, // UNKNOWN_USER
	193: true, // WRONG_PASSWORD
	194: true, // REQUIRED_PASSWORD
	516: true, // AUTHENTICATION_FAILED
}

// CheckHealth connects, reports the server version and checks the tables
// and, for Distributed tables, their cluster's hosts, saying exactly what
// is wrong otherwise.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	fail := func(format string, a ...any) (*backend.CheckHealthResult, error) {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: fmt.Sprintf(format, a...)}, nil
	}
	if d.setupErr != nil {
		return fail("Data source settings: %v", d.setupErr)
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	// The driver's handshake waits out dialTimeout whatever ctx says.
	res, err := query.Guard(ctx, func(ctx context.Context) (*backend.CheckHealthResult, error) {
		if err := d.store.Ping(ctx); err != nil {
			return fail("%s", explainConnect(d.settings, err))
		}
		version, err := d.store.ServerVersion(ctx)
		if err != nil {
			return fail("Connected, but the server version query failed: %v", err)
		}
		if err := d.store.CheckTables(ctx); err != nil {
			return fail("Connected to ClickHouse %s, but %v", version, err)
		}
		cluster, err := d.store.CheckCluster(ctx)
		if err != nil {
			return fail("Connected to ClickHouse %s, but %v", version, err)
		}
		msg := fmt.Sprintf("Connected to ClickHouse %s; Flamediff's tables are in place.", version)
		if cluster != "" {
			msg += " " + cluster + "."
		}
		return &backend.CheckHealthResult{Status: backend.HealthStatusOk, Message: msg}, nil
	})
	if err != nil {
		return fail("%s", explainConnect(d.settings, fmt.Errorf("no answer within %v: %w", healthTimeout, err)))
	}
	return res, nil
}

// explainConnect turns a failed connection into the user's next step.
func explainConnect(s Settings, err error) string {
	addr := net.JoinHostPort(s.Host, fmt.Sprint(s.Port))
	var ex *clickhouse.Exception
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &ex) && authCodes[ex.Code]:
		return fmt.Sprintf("ClickHouse at %s refused the credentials of user %q: %s", addr, s.Username, ex.Message)
	case storage.NoDatabase(err):
		return fmt.Sprintf("ClickHouse at %s has no database %q (run `flamediff migrate`): %s", addr, s.DefaultDatabase, ex.Message)
	case errors.As(err, &opErr), errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("ClickHouse at %s (%s protocol) is unreachable: %v", addr, s.Protocol, err)
	}
	return fmt.Sprintf("Cannot connect to ClickHouse at %s: %v", addr, err)
}
