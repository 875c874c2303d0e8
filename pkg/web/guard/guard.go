// Package guard keeps the web pages a user visits from reading or driving
// Flamediff's HTTP servers (flamediff serve, and any other listener of
// ours). A page can reach a loopback port: by DNS rebinding its own name
// to 127.0.0.1 (same origin for the browser, but a foreign Host header),
// or by a "simple" cross-origin request (a form or text/plain POST, which
// needs no preflight). So every request must name an expected Host, data
// requests must come from the server's own origin and carry a JSON (or
// the endpoint's own) content type, no CORS header is ever sent, and a
// server reachable from other machines needs a bearer token.
//
// The package reads no file and no environment: the command that listens
// passes the token in.
package guard

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Options configure a Guard.
type Options struct {
	// Addr is the address the server listens on (the listener's Addr()).
	// Its IP, unless unspecified (0.0.0.0, ::), is an allowed Host.
	Addr net.Addr
	// Hosts are further names the server may be reached by (a machine
	// name, a reverse proxy's), besides localhost, 127.0.0.1 and [::1].
	Hosts []string
	// Token, when not empty, must come with every request: as
	// "Authorization: Bearer TOKEN", or as the cookie a browser gets by
	// opening any page with ?token=TOKEN once. It is required when Addr
	// is not a loopback address.
	Token string
	// Refuse writes a refusal, for a server whose protocol says how an
	// error looks (the OTLP receiver's google.rpc.Status); nil writes
	// {"error": msg} as JSON.
	Refuse func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// Guard checks requests; see New.
type Guard struct {
	hosts  map[string]bool
	token  [sha256.Size]byte // a digest: compared in constant time whatever the length
	auth   bool
	refuse func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// CookieName is the cookie that carries the token for a browser.
const CookieName = "flamediff_token"

// ErrNoToken is New's error for a server that others could reach without one.
var ErrNoToken = errors.New("a server that listens on a non-loopback address needs a token")

// New returns a Guard for a server listening on o.Addr. It refuses a
// non-loopback address without a token (ErrNoToken), and host names that
// are empty or hold a port.
func New(o Options) (*Guard, error) {
	g := &Guard{hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}, refuse: o.Refuse}
	if g.refuse == nil {
		g.refuse = refuseJSON
	}
	tcp, ok := o.Addr.(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("guard: listen address %v is not TCP", o.Addr)
	}
	if !tcp.IP.IsLoopback() && o.Token == "" {
		return nil, fmt.Errorf("%w: %v is reachable from other machines", ErrNoToken, o.Addr)
	}
	if !tcp.IP.IsUnspecified() {
		g.hosts[tcp.IP.String()] = true
	}
	for _, h := range o.Hosts {
		name := strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
		if name == "" || strings.ContainsAny(name, ":/ ") && net.ParseIP(name) == nil {
			return nil, fmt.Errorf("guard: allowed host %q: want a name or an IP address without port", h)
		}
		g.hosts[name] = true
	}
	if o.Token != "" {
		g.auth, g.token = true, sha256.Sum256([]byte(o.Token))
	}
	return g, nil
}

// Site wraps every handler of a server: the Host check (421), the token
// (401) and headers that keep the pages out of other sites' frames.
func (g *Guard) Site(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		if !g.hostAllowed(r.Host) {
			g.refuse(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not a name this server answers to "+
				"(localhost, 127.0.0.1, [::1], its listen address, or names given with --allow-host)", r.Host))
			return
		}
		if g.auth && !g.authorized(w, r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flamediff"`)
			g.refuse(w, r, http.StatusUnauthorized, "this server needs its token: send Authorization: Bearer TOKEN, "+
				"or open the page once with ?token=TOKEN")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Data wraps a data or state-changing endpoint (inside Site): a request
// from another origin is refused (403), and one with a body must have one
// of contentTypes (application/json when none are given; lower case),
// else 415. No
// CORS header is sent, so a preflight fails too.
func (g *Guard) Data(h http.Handler, contentTypes ...string) http.Handler {
	if len(contentTypes) == 0 {
		contentTypes = []string{"application/json"}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := foreign(r); msg != "" {
			g.refuse(w, r, http.StatusForbidden, msg)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || !slices.Contains(contentTypes, t) {
				g.refuse(w, r, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: this endpoint takes %s",
					r.Header.Get("Content-Type"), strings.Join(contentTypes, " or ")))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether the Host header names this server.
func (g *Guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return g.hosts[host]
}

// authorized checks the request's token; a ?token= that matches also
// sets the cookie, so that the page's own requests carry it.
func (g *Guard) authorized(w http.ResponseWriter, r *http.Request) bool {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return g.matches(strings.TrimPrefix(a, "Bearer "))
	}
	if t := r.URL.Query().Get("token"); t != "" && g.matches(t) {
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	c, err := r.Cookie(CookieName)
	return err == nil && g.matches(c.Value)
}

func (g *Guard) matches(token string) bool {
	d := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(d[:], g.token[:]) == 1
}

// foreign explains why a request comes from another origin, or returns "".
// Browsers send Origin with every cross-origin fetch and with every POST,
// and Sec-Fetch-Site with every request; tools such as curl send neither.
func foreign(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Sprintf("Origin %q is not this server's: the API answers only its own page", o)
		}
	}
	switch s := r.Header.Get("Sec-Fetch-Site"); s {
	case "", "same-origin", "none":
	default:
		return fmt.Sprintf("a %s request (Sec-Fetch-Site): the API answers only its own page", s)
	}
	return ""
}

// refuseJSON answers as the servers' own errors do: {"error": msg}.
func refuseJSON(w http.ResponseWriter, _ *http.Request, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
