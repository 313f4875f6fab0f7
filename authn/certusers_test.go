package authn

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"runtime"
	"testing"
	"time"
)

// TestCertUsers checks that a remembered user is found only for the same
// certificate (by address), presented chain, roots, intermediates pool
// and usages, and only until the chain's first expiry.
func TestCertUsers(t *testing.T) {
	root := newTestCA(t, "root", nil)
	inter := newTestCA(t, "intermediate", root)
	jane := inter.client(t, pkix.Name{CommonName: "jane"})
	janeAgain, err := x509.ParseCertificate(jane.Raw) // the same certificate, parsed by another connection
	if err != nil {
		t.Fatal(err)
	}
	roots, otherRoots, pool := x509.NewCertPool(), x509.NewCertPool(), x509.NewCertPool()
	opts := x509.VerifyOptions{Roots: roots}
	peers := []*x509.Certificate{jane, inter.cert}
	until := time.Now().Add(time.Hour)
	resp := &Response{User: &User{Name: "jane"}}

	c := newCertUsers()
	c.remember(peers, opts, until, resp)
	steps := []struct {
		name  string
		peers []*x509.Certificate
		opts  x509.VerifyOptions
		now   time.Time
		want  bool
	}{
		{"the same", []*x509.Certificate{jane, inter.cert}, opts, time.Now(), true},
		{"just before the expiry", peers, opts, until.Add(-time.Nanosecond), true},
		{"at the expiry", peers, opts, until, false},
		{"after it", peers, opts, until.Add(time.Hour), false},
		{"other roots", peers, x509.VerifyOptions{Roots: otherRoots}, time.Now(), false},
		{"an intermediates pool", peers, x509.VerifyOptions{Roots: roots, Intermediates: pool}, time.Now(), false},
		{"other usages", peers, x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}, time.Now(), false},
		{"without the intermediate", []*x509.Certificate{jane}, opts, time.Now(), false},
		{"another intermediate", []*x509.Certificate{jane, root.cert}, opts, time.Now(), false},
		{"a copy of the certificate", []*x509.Certificate{janeAgain, inter.cert}, opts, time.Now(), false},
		{"a fixed time", peers, x509.VerifyOptions{Roots: roots, CurrentTime: time.Now()}, time.Now(), false},
	}
	for _, s := range steps {
		got, ok := c.lookup(s.peers, s.opts, s.now)
		if ok != s.want || (ok && got != resp) {
			t.Errorf("%s: = %v, %v; want found %v", s.name, got, ok, s.want)
		}
	}

	c.remember(peers, x509.VerifyOptions{Roots: roots, DNSName: "x"}, until, resp)
	if n := c.size(); n != 1 {
		t.Errorf("%d entries after remembering with a DNS name, want 1", n)
	}
}

// TestCertUsersForgetsCollectedCertificates checks that an entry goes
// once its certificate is garbage: the cache must not keep every closed
// connection's certificate.
func TestCertUsersForgetsCollectedCertificates(t *testing.T) {
	root := newTestCA(t, "root", nil)
	roots := x509.NewCertPool()
	c := newCertUsers()
	func() {
		jane := root.client(t, pkix.Name{CommonName: "jane"})
		c.remember([]*x509.Certificate{jane}, x509.VerifyOptions{Roots: roots}, time.Now().Add(time.Hour), &Response{})
	}()
	if n := c.size(); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
	// Cleanups run on their own goroutine after a collection.
	for i := 0; i < 1000 && c.size() > 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := c.size(); n != 0 {
		t.Errorf("%d entries after the certificate was collected, want 0", n)
	}
}

func (c *certUsers) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
