package authn

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// RequestHeaders names the headers a front proxy (an aggregating server,
// say) states its client's identity in: the first non-empty user name
// header, the first non-empty UID header, every value of the group headers,
// and one Extra key per header under a prefix (the rest of the header's
// name, lower-cased and %-decoded).
type RequestHeaders struct {
	Username, UID, Group, ExtraPrefix []string
}

// StandardRequestHeaders are the X-Remote-* headers kube-apiserver always
// strips from authenticated requests, whatever it is configured to read.
var StandardRequestHeaders = RequestHeaders{
	Username: []string{"X-Remote-User"}, UID: []string{"X-Remote-Uid"},
	Group: []string{"X-Remote-Group"}, ExtraPrefix: []string{"X-Remote-Extra-"},
}

// TrimHeaderNames trims the names' spaces; an empty name is an error.
func TrimHeaderNames(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		t := strings.TrimSpace(n)
		if t == "" {
			return nil, fmt.Errorf("empty header %q", n)
		}
		out = append(out, t)
	}
	return out, nil
}

// Clear deletes the headers from h: a backend must not see a client's
// claims, only what the server made of them.
func (rh RequestHeaders) Clear(h http.Header) {
	for _, names := range [][]string{rh.Username, rh.UID, rh.Group} {
		for _, n := range names {
			h.Del(n)
		}
	}
	for _, prefix := range rh.ExtraPrefix {
		for k := range h {
			if hasPrefixFold(k, prefix) {
				delete(h, k)
			}
		}
	}
}

// user reads the identity the headers state; ok is false without a user
// name.
func (rh RequestHeaders) user(h http.Header) (*User, bool) {
	name := firstValue(h, rh.Username)
	if name == "" {
		return nil, false
	}
	groups := []string{}
	for _, n := range rh.Group {
		for _, v := range h[http.CanonicalHeaderKey(n)] {
			if v != "" {
				groups = append(groups, v)
			}
		}
	}
	extra := map[string][]string{}
	for _, prefix := range rh.ExtraPrefix {
		for k, vs := range h {
			if !hasPrefixFold(k, prefix) {
				continue
			}
			key := strings.ToLower(k[len(prefix):])
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			extra[key] = append(extra[key], vs...)
		}
	}
	return &User{Name: name, UID: firstValue(h, rh.UID), Groups: groups, Extra: extra}, true
}

func firstValue(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// NewRequestHeader returns the authenticator of a front proxy's requests
// (--requestheader-*): the headers are believed only when the request
// carries a client certificate that verifies with the options
// verifyOptions returns (the front proxy's CA as Roots) and, when
// allowedNames is not empty, whose CommonName is one of them. A request
// without a certificate, or a proxy's request without the user name header,
// gets no opinion; a certificate that does not verify, or a name not
// allowed, is an error, so the request is left to the other authenticators
// (a client certificate of the client CA still authenticates its own
// user, ignoring the headers). The headers are removed once read.
func NewRequestHeader(headers RequestHeaders, allowedNames []string, verifyOptions func() x509.VerifyOptions) Authenticator {
	allowedNames = slices.Clone(allowedNames)
	cache := newVerifyCache()
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		cert, ok, err := verifiedClientCert(r, verifyOptions, cache)
		if !ok || err != nil {
			return nil, false, err
		}
		if cn := cert.Subject.CommonName; len(allowedNames) > 0 && !slices.Contains(allowedNames, cn) {
			return nil, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", cn)
		}
		u, ok := headers.user(r.Header)
		if !ok {
			return nil, false, nil
		}
		headers.Clear(r.Header)
		return &Response{User: u}, true, nil
	})
}
