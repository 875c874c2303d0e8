package guard_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/web/guard"
)

// server is a guarded site: GET / a page, /api/ data (JSON bodies).
func server(t *testing.T, o guard.Options) http.Handler {
	t.Helper()
	if o.Addr == nil {
		o.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3001}
	}
	g, err := guard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("secret")) })
	mux := http.NewServeMux()
	mux.Handle("/", ok)
	mux.Handle("/api/", g.Data(ok))
	return g.Site(mux)
}

type request struct {
	method, path, host string
	header             map[string]string
}

func do(h http.Handler, r request) *httptest.ResponseRecorder {
	var body *strings.Reader
	if r.method == "" {
		r.method = http.MethodGet
	}
	body = strings.NewReader("")
	if r.method == http.MethodPost {
		body = strings.NewReader(`{"queryType":"runs"}`)
	}
	req := httptest.NewRequest(r.method, "http://x"+r.path, body)
	req.Host = r.host
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestGuard(t *testing.T) {
	h := server(t, guard.Options{Hosts: []string{"flamediff.internal"}})
	json := map[string]string{"Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name string
		r    request
		want int
	}{
		{"page", request{"", "/", "127.0.0.1:3001", nil}, 200},
		{"page by localhost", request{"", "/", "localhost:3001", nil}, 200},
		{"page by LOCALHOST.", request{"", "/", "LOCALHOST.:3001", nil}, 200},
		{"page by [::1]", request{"", "/", "[::1]:3001", nil}, 200},
		{"page by an allowed name", request{"", "/", "flamediff.internal:3001", nil}, 200},
		{"data, same origin", request{"POST", "/api/query", "127.0.0.1:3001", with(map[string]string{"Origin": "http://127.0.0.1:3001", "Sec-Fetch-Site": "same-origin"})}, 200},
		{"data from curl", request{"POST", "/api/query", "127.0.0.1:3001", json}, 200},
		{"resources from curl", request{"", "/api/resources/apps", "localhost:3001", nil}, 200},

		// DNS rebinding: the browser thinks it talks to attacker.example.
		{"rebound page", request{"", "/", "attacker.example:3001", nil}, 421},
		{"rebound static file", request{"", "/favicon.ico", "attacker.example", nil}, 421},
		{"rebound resources", request{"", "/api/resources/apps", "attacker.example:3001", nil}, 421},
		{"rebound query", request{"POST", "/api/query", "attacker.example:3001", with(map[string]string{"Origin": "http://attacker.example:3001"})}, 421},
		{"host with a loopback suffix", request{"", "/", "127.0.0.1.attacker.example", nil}, 421},
		{"no host", request{"", "/", "", nil}, 421},

		// Cross-origin requests a page may send without a preflight.
		{"foreign origin", request{"POST", "/api/query", "127.0.0.1:3001", with(map[string]string{"Origin": "http://attacker.example"})}, 403},
		{"another local port", request{"POST", "/api/query", "127.0.0.1:3001", with(map[string]string{"Origin": "http://127.0.0.1:8080"})}, 403},
		{"null origin", request{"POST", "/api/query", "127.0.0.1:3001", with(map[string]string{"Origin": "null"})}, 403},
		{"foreign origin reading resources", request{"", "/api/resources/apps", "127.0.0.1:3001", map[string]string{"Origin": "http://attacker.example"}}, 403},
		{"same-site fetch", request{"", "/api/resources/apps", "localhost:3001", map[string]string{"Sec-Fetch-Site": "same-site"}}, 403},
		{"cross-site fetch", request{"", "/api/resources/apps", "localhost:3001", map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403},
		{"preflight", request{"OPTIONS", "/api/query", "127.0.0.1:3001", map[string]string{"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST"}}, 403},
		{"text/plain post", request{"POST", "/api/query", "127.0.0.1:3001", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}}, 415},
		{"form post", request{"POST", "/api/query", "127.0.0.1:3001", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415},
		{"multipart post", request{"POST", "/api/query", "127.0.0.1:3001", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, 415},
		{"post without type", request{"POST", "/api/query", "127.0.0.1:3001", nil}, 415},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := do(h, c.r)
			if w.Code != c.want {
				t.Errorf("status %d %s, want %d", w.Code, w.Body, c.want)
			}
			if c.want != 200 && (strings.Contains(w.Body.String(), "secret") || !strings.Contains(w.Body.String(), `"error"`)) {
				t.Errorf("refusal %q: leaks the answer or gives no reason", w.Body)
			}
			for k := range w.Header() {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("CORS header %s sent", k)
				}
			}
		})
	}
}

func TestToken(t *testing.T) {
	wild := &net.TCPAddr{IP: net.IPv4zero, Port: 3001}
	if _, err := guard.New(guard.Options{Addr: wild}); !errors.Is(err, guard.ErrNoToken) {
		t.Fatalf("0.0.0.0 without a token: %v, want ErrNoToken", err)
	}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 3001}
	if _, err := guard.New(guard.Options{Addr: public}); !errors.Is(err, guard.ErrNoToken) {
		t.Fatalf("192.0.2.7 without a token: %v, want ErrNoToken", err)
	}
	h := server(t, guard.Options{Addr: public, Token: "s3cret-token"})
	host := "192.0.2.7:3001"
	for _, c := range []struct {
		name string
		r    request
		want int
	}{
		{"no token", request{"", "/", host, nil}, 401},
		{"wrong token", request{"", "/", host, map[string]string{"Authorization": "Bearer s3cret-tokem"}}, 401},
		{"prefix of the token", request{"", "/", host, map[string]string{"Authorization": "Bearer s3cret"}}, 401},
		{"bearer", request{"", "/api/resources/apps", host, map[string]string{"Authorization": "Bearer s3cret-token"}}, 200},
		{"wrong cookie", request{"", "/", host, map[string]string{"Cookie": guard.CookieName + "=nope"}}, 401},
		{"cookie", request{"", "/", host, map[string]string{"Cookie": guard.CookieName + "=s3cret-token"}}, 200},
		{"wrong query token", request{"", "/?token=nope", host, nil}, 401},
		{"token but foreign host", request{"", "/", "attacker.example", map[string]string{"Authorization": "Bearer s3cret-token"}}, 421},
	} {
		t.Run(c.name, func(t *testing.T) {
			if w := do(h, c.r); w.Code != c.want {
				t.Errorf("status %d %s, want %d", w.Code, w.Body, c.want)
			}
		})
	}
	w := do(h, request{"", "/?token=s3cret-token", host, nil})
	c := w.Result().Cookies()
	if w.Code != 200 || len(c) != 1 || c[0].Name != guard.CookieName || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("?token=: %d, cookies %v; want 200 and a strict, HttpOnly cookie", w.Code, c)
	}
}

func TestBadHosts(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv6loopback, Port: 1}
	for _, h := range []string{"", "a.example:80", "http://a.example"} {
		if _, err := guard.New(guard.Options{Addr: addr, Hosts: []string{h}}); err == nil {
			t.Errorf("allowed host %q accepted", h)
		}
	}
	if _, err := guard.New(guard.Options{Addr: addr, Hosts: []string{"[fe80::1]", "Build-Box.local."}}); err != nil {
		t.Error(err)
	}
}
