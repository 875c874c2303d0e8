package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/storage"
)

func TestClassify(t *testing.T) {
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	live := context.Background()
	wrap := func(err error) error { return fmt.Errorf("read stack values: %w", err) }
	for _, c := range []struct {
		ctx        context.Context
		err        error
		status     int
		downstream bool
		says       string // in the message, if not ""
	}{
		{live, wrap(storage.ErrUnknownApp), 404, true, ""},
		{live, fmt.Errorf("%w: limit", errBadRequest), 400, true, ""},
		{live, wrap(storage.ErrTooManyRows), 400, true, ""},
		{live, wrap(query.ErrTooBig), 400, true, ""},
		{live, wrap(errBusy), 503, true, ""},
		{live, wrap(clickhouse.ErrAcquireConnTimeout), 503, true, ""},
		{live, wrap(&clickhouse.Exception{Code: 202}), 503, true, ""},
		{expired, wrap(io.EOF), 504, true, ""},
		{live, wrap(&clickhouse.Exception{Code: 159}), 504, true, ""},
		{live, wrap(&net.OpError{Op: "read", Err: timeoutErr{}}), 504, true, ""},
		{live, wrap(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), 502, true, ""},
		{live, wrap(io.EOF), 502, true, ""},
		{live, wrap(&clickhouse.Exception{Code: 60, Message: "Table x doesn't exist"}), 502, true, "run `flamediff migrate`"},
		{live, wrap(&clickhouse.Exception{Code: 47, Message: "Unknown identifier: stacks_summed"}), 502, true, "run `flamediff migrate`"},
		{live, wrap(&clickhouse.Exception{Code: 16, Message: "There is no column frame_bytes"}), 502, true, "run `flamediff migrate`"},
		{live, wrap(&clickhouse.Exception{Code: 241, Message: "Memory limit exceeded"}), 502, true, ""},
		{live, wrap(storage.ErrMissingFrame), 502, true, ""},
		{live, fmt.Errorf("%w: index out of range", query.ErrInternal), 500, false, ""},
		{live, errors.New("stack reader panicked: boom"), 500, false, ""},
	} {
		f := classify(c.ctx, c.err)
		if f.status != c.status || f.downstream != c.downstream {
			t.Errorf("%v: %d downstream=%v, want %d downstream=%v", c.err, f.status, f.downstream, c.status, c.downstream)
		}
		if migrate := strings.Contains(f.msg, "flamediff migrate"); c.says != "" && !strings.Contains(f.msg, c.says) || c.says == "" && migrate {
			t.Errorf("%v: message %q, want it to say %q", c.err, f.msg, c.says)
		}
		if internal := f.status == 500; internal != strings.Contains(f.msg, "internal error") || internal && strings.Contains(f.msg, "ClickHouse") {
			t.Errorf("%v: message %q: plugin bugs, and only they, are internal errors, never ClickHouse's", c.err, f.msg)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
