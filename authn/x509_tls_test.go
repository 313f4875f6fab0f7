package authn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestX509OverTLSConnections checks the users of client certificates over
// real TLS connections (HTTP/2), where every request of a connection
// presents the same parsed certificate: the second request on a
// connection is still its certificate's user, another connection's
// certificate is its own user, and an expired certificate is refused on
// every request.
func TestX509OverTLSConnections(t *testing.T) {
	root := newTestCA(t, "root", nil)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	auth := NewX509(func() x509.VerifyOptions { return x509.VerifyOptions{Roots: roots} })
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := auth.AuthenticateRequest(r)
		if err != nil || !ok {
			http.Error(w, fmt.Sprint(err), http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, "%s %v", resp.User.Name, resp.User.Groups)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	client := func(subject pkix.Name, notBefore, notAfter time.Time) *http.Client {
		cert, key := signTestCert(t, &x509.Certificate{
			Subject: subject, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			NotBefore:   notBefore, NotAfter: notAfter,
		}, root)
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}}
		tr.ForceAttemptHTTP2 = true
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	get := func(c *http.Client) (body string, reused bool) {
		t.Helper()
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.ProtoMajor != 2 {
			t.Errorf("served over %s, want HTTP/2", resp.Proto)
		}
		return fmt.Sprintf("%d %s", resp.StatusCode, b), reused
	}

	now := time.Now()
	jane := client(pkix.Name{CommonName: "jane", Organization: []string{"dev"}}, now.Add(-time.Hour), now.Add(time.Hour))
	bob := client(pkix.Name{CommonName: "bob"}, now.Add(-time.Hour), now.Add(time.Hour))
	old := client(pkix.Name{CommonName: "old"}, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	steps := []struct {
		name       string
		client     *http.Client
		want       string
		wantReused bool
	}{
		{"jane", jane, "200 jane [dev]", false},
		{"jane again, same connection", jane, "200 jane [dev]", true},
		{"bob, his own connection", bob, "200 bob []", false},
		{"jane a third time", jane, "200 jane [dev]", true},
		{"expired", old, "401 verifying certificate", false},
		{"expired again, same connection", old, "401 verifying certificate", true},
		{"bob again", bob, "200 bob []", true},
	}
	for _, s := range steps {
		got, reused := get(s.client)
		if len(got) < len(s.want) || got[:len(s.want)] != s.want || reused != s.wantReused {
			t.Errorf("%s: got %q (connection reused %v), want %q... (reused %v)", s.name, got, reused, s.want, s.wantReused)
		}
	}
}
