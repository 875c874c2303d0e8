package plugin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

func load(t *testing.T, jsonData string, secure map[string]string) (Settings, *clickhouse.Options, error) {
	t.Helper()
	s, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(jsonData), DecryptedSecureJSONData: secure})
	if err != nil {
		return s, nil, err
	}
	o, err := s.ClickHouseOptions()
	return s, o, err
}

func TestLoadSettings(t *testing.T) {
	cases := []struct {
		name, json string
		check      func(t *testing.T, s Settings, o *clickhouse.Options)
	}{
		{"defaults", `{"host":"ch"}`, func(t *testing.T, s Settings, o *clickhouse.Options) {
			if o.Addr[0] != "ch:9000" || o.Protocol != clickhouse.Native || o.DialTimeout != defaultDialTimeout ||
				s.QueryTimeoutDuration() != defaultQueryTimeout || s.MaxStacks != defaultMaxStacks || o.TLS != nil ||
				s.MaxQueries != defaultMaxQueries || o.MaxOpenConns != 2*defaultMaxQueries+1 ||
				s.QueueTimeoutDuration() != defaultQueueTimeout || s.QueryMemory() != defaultQueryMemory<<20 {
				t.Errorf("%+v %+v", s, o)
			}
		}},
		{"limits", `{"host":"h","maxQueries":3,"queueTimeout":"1.5","maxQueryMemory":64}`, func(t *testing.T, s Settings, o *clickhouse.Options) {
			if o.MaxOpenConns != 7 || o.MaxIdleConns != 7 || s.QueueTimeoutDuration() != 1500*time.Millisecond || s.QueryMemory() != 64<<20 {
				t.Errorf("%+v %+v", s, o)
			}
		}},
		{"grafana clickhouse names, string timeouts", `{"host":"db.example","protocol":"http","secure":true,"username":"u",
			"defaultDatabase":"perf","dialTimeout":"3","queryTimeout":"2.5","tlsSkipVerify":true}`,
			func(t *testing.T, s Settings, o *clickhouse.Options) {
				if o.Addr[0] != "db.example:8443" || o.Protocol != clickhouse.HTTP || o.Auth.Database != "perf" ||
					o.Auth.Username != "u" || o.Auth.Password != "secret" || o.DialTimeout != 3*time.Second ||
					s.QueryTimeoutDuration() != 2500*time.Millisecond || o.TLS == nil || !o.TLS.InsecureSkipVerify {
					t.Errorf("%+v %+v", s, o)
				}
			}},
		{"numeric timeouts, tables, rules", `{"host":"h","port":19000,"dialTimeout":1,"tables":{"runs":"db.runs_all"},
			"distributed":true,"systemFrames":["^runtime\\."]}`, func(t *testing.T, s Settings, o *clickhouse.Options) {
			if o.Addr[0] != "h:19000" || o.DialTimeout != time.Second || s.Tables.Runs != "db.runs_all" || s.Distributed == nil || !*s.Distributed ||
				len(s.SystemFrames) != 1 {
				t.Errorf("%+v %+v", s, o)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, o, err := load(t, c.json, map[string]string{"password": "secret"})
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s, o)
		})
	}
}

func TestLoadSettingsErrors(t *testing.T) {
	for json, want := range map[string]string{
		`{`:                                  "invalid data source settings",
		`{}`:                                 "host is required",
		`{"host":"h","protocol":"grpc"}`:     "protocol must be native or http",
		`{"host":"h","port":70000}`:          "port 70000 out of range",
		`{"host":"h","queryTimeout":"soon"}`: "not a number of seconds",
		`{"host":"h","dialTimeout":-1}`:      "negative timeout",
		`{"host":"h","maxQueries":-2}`:       "maxQueries must be positive",
	} {
		if _, _, err := load(t, json, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", json, err, want)
		}
	}
	if _, _, err := load(t, `{"host":"h","secure":true}`, map[string]string{"tlsCACert": "not pem"}); err == nil ||
		!strings.Contains(err.Error(), "tlsCACert") {
		t.Errorf("bad CA: %v", err)
	}
	if _, _, err := load(t, `{"host":"h","secure":true}`, map[string]string{"tlsClientCert": "x"}); err == nil ||
		!strings.Contains(err.Error(), "client certificate") {
		t.Errorf("bad client cert: %v", err)
	}
}

func TestTLSFromPEM(t *testing.T) {
	certPEM, keyPEM := selfSigned(t)
	_, o, err := load(t, `{"host":"h","secure":true}`, map[string]string{
		"tlsCACert": certPEM, "tlsClientCert": certPEM, "tlsClientKey": keyPEM,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.TLS.RootCAs == nil || len(o.TLS.Certificates) != 1 || o.TLS.InsecureSkipVerify {
		t.Errorf("TLS config %+v", o.TLS)
	}
	if o.Addr[0] != "h:9440" {
		t.Errorf("secure native port %s, want 9440", o.Addr[0])
	}
}

func selfSigned(t *testing.T) (string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flamediff"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
