package plugin

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/flamediff/flamediff/pkg/storage"
)

// Settings is the data source configuration. JSON names follow Grafana's
// official ClickHouse data source so that users feel at home.
type Settings struct {
	Host            string `json:"host"`
	Port            int    `json:"port"`
	Protocol        string `json:"protocol"` // "native" (default) or "http"
	Secure          bool   `json:"secure"`
	TLSSkipVerify   bool   `json:"tlsSkipVerify"`
	Username        string `json:"username"`
	DefaultDatabase string `json:"defaultDatabase"`
	// DialTimeout and QueryTimeout are seconds; Grafana's ClickHouse data
	// source stores them as strings, so both forms are accepted.
	DialTimeout  flexSeconds `json:"dialTimeout"`
	QueryTimeout flexSeconds `json:"queryTimeout"`
	// Tables overrides the table names, e.g. to point at Distributed tables.
	Tables storage.Tables `json:"tables"`
	// Distributed, when set, overrides the detection of Distributed tables
	// (true: GLOBAL IN, false: IN); health reports one that contradicts
	// the tables.
	Distributed *bool `json:"distributed"`
	// SystemFrames are extra regular expressions (matched against a frame's
	// name or module) that mark a frame as system code.
	SystemFrames []string `json:"systemFrames"`
	// MaxStacks caps the distinct (run, stack) rows one query may read.
	MaxStacks int `json:"maxStacks"`
	// MaxConnections sizes the ClickHouse connection pool; MaxQueries is
	// how many queries run at once (each holds up to two connections);
	// more wait up to QueueTimeout seconds for their turn, then fail as
	// busy. MaxQueryMemory (MB) bounds what one query may hold.
	MaxConnections int         `json:"maxConnections"`
	MaxQueries     int         `json:"maxQueries"`
	QueueTimeout   flexSeconds `json:"queueTimeout"`
	MaxQueryMemory int         `json:"maxQueryMemory"`

	Password      string `json:"-"`
	TLSCACert     string `json:"-"`
	TLSClientCert string `json:"-"`
	TLSClientKey  string `json:"-"`
}

// Defaults applied where the settings leave a field empty.
const (
	defaultDialTimeout  = 10 * time.Second
	defaultQueryTimeout = 60 * time.Second
	defaultMaxStacks    = 10_000_000
	defaultMaxQueries   = 1
	defaultQueueTimeout = 30 * time.Second
	defaultQueryMemory  = 640 // MB
)

// flexSeconds decodes a number of seconds given as a JSON number or string.
type flexSeconds float64

func (s *flexSeconds) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*s = 0
	case float64:
		*s = flexSeconds(x)
	case string:
		if x == "" {
			*s = 0
			return nil
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return fmt.Errorf("not a number of seconds: %q", x)
		}
		*s = flexSeconds(f)
	default:
		return fmt.Errorf("not a number of seconds: %s", b)
	}
	if *s < 0 {
		return fmt.Errorf("negative timeout: %s", b)
	}
	return nil
}

func (s flexSeconds) or(def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(float64(s) * float64(time.Second))
}

// LoadSettings decodes Grafana's instance settings and validates them.
func LoadSettings(in backend.DataSourceInstanceSettings) (Settings, error) {
	var s Settings
	if len(in.JSONData) > 0 {
		if err := json.Unmarshal(in.JSONData, &s); err != nil {
			return s, fmt.Errorf("invalid data source settings: %w", err)
		}
	}
	sec := in.DecryptedSecureJSONData
	s.Password, s.TLSCACert, s.TLSClientCert, s.TLSClientKey =
		sec["password"], sec["tlsCACert"], sec["tlsClientCert"], sec["tlsClientKey"]
	if s.Host == "" {
		return s, errors.New("settings: host is required")
	}
	if s.Protocol == "" {
		s.Protocol = "native"
	}
	if s.Protocol != "native" && s.Protocol != "http" {
		return s, fmt.Errorf("settings: protocol must be native or http, not %q", s.Protocol)
	}
	if s.Port == 0 {
		s.Port = defaultPort(s.Protocol, s.Secure)
	}
	if s.Port < 0 || s.Port > 65535 {
		return s, fmt.Errorf("settings: port %d out of range", s.Port)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"maxStacks", &s.MaxStacks, defaultMaxStacks},
		{"maxQueries", &s.MaxQueries, defaultMaxQueries},
		{"maxConnections", &s.MaxConnections, 0},
		{"maxQueryMemory", &s.MaxQueryMemory, defaultQueryMemory},
	} {
		if *f.v < 0 {
			return s, fmt.Errorf("settings: %s must be positive, not %d", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if s.MaxConnections == 0 { // two per query, and one for the editors' resources
		s.MaxConnections = 2*s.MaxQueries + 1
	}
	return s, nil
}

func defaultPort(protocol string, secure bool) int {
	switch {
	case protocol == "http" && secure:
		return 8443
	case protocol == "http":
		return 8123
	case secure:
		return 9440
	default:
		return 9000
	}
}

// ClickHouseOptions turns the settings into clickhouse-go options.
func (s Settings) ClickHouseOptions() (*clickhouse.Options, error) {
	opts := &clickhouse.Options{
		Addr: []string{net.JoinHostPort(s.Host, strconv.Itoa(s.Port))},
		Auth: clickhouse.Auth{
			Database: s.DefaultDatabase,
			Username: s.Username,
			Password: s.Password,
		},
		DialTimeout:  s.DialTimeout.or(defaultDialTimeout),
		ReadTimeout:  s.QueryTimeout.or(defaultQueryTimeout),
		Protocol:     clickhouse.Native,
		MaxOpenConns: s.MaxConnections,
		MaxIdleConns: s.MaxConnections,
	}
	if s.Protocol == "http" {
		opts.Protocol = clickhouse.HTTP
	}
	if s.Secure {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts.TLS = cfg
	}
	return opts, nil
}

func (s Settings) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: s.TLSSkipVerify} // #nosec G402 -- the user's explicit choice
	if s.TLSCACert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(s.TLSCACert)) {
			return nil, errors.New("settings: tlsCACert holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if s.TLSClientCert != "" || s.TLSClientKey != "" {
		pair, err := tls.X509KeyPair([]byte(s.TLSClientCert), []byte(s.TLSClientKey))
		if err != nil {
			return nil, fmt.Errorf("settings: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// QueryTimeoutDuration is how long one query may run.
func (s Settings) QueryTimeoutDuration() time.Duration { return s.QueryTimeout.or(defaultQueryTimeout) }

// QueueTimeoutDuration is how long a query waits for its turn.
func (s Settings) QueueTimeoutDuration() time.Duration { return s.QueueTimeout.or(defaultQueueTimeout) }

// QueryMemory is MaxQueryMemory in bytes.
func (s Settings) QueryMemory() int64 { return int64(s.MaxQueryMemory) << 20 }
