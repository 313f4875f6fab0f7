package deprecatedcert

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/capstan-io/capstan/metrics"
)

// TestWrap: a request to a backend serving a certificate kube deprecates
// is counted once in the right counter, whether Go refused the connection
// (verification on) or made it (verification skipped); a good certificate
// is counted nowhere.
func TestWrap(t *testing.T) {
	ca, caKey := certificate(t, nil, nil, x509.SHA256WithRSA, true, nil)
	tests := []struct {
		name                     string
		algorithm                x509.SignatureAlgorithm
		sans                     []net.IP
		skipVerify               bool
		wantErr                  bool
		wantMissingSAN, wantSHA1 float64
	}{
		{name: "good", algorithm: x509.SHA256WithRSA, sans: []net.IP{net.IPv4(127, 0, 0, 1)}},
		{name: "common name only, refused", algorithm: x509.SHA256WithRSA, wantErr: true, wantMissingSAN: 1},
		{name: "common name only, served", algorithm: x509.SHA256WithRSA, skipVerify: true, wantMissingSAN: 1},
		{name: "SHA-1, refused", algorithm: x509.SHA1WithRSA, sans: []net.IP{net.IPv4(127, 0, 0, 1)}, wantErr: true, wantSHA1: 1},
		{name: "SHA-1, served", algorithm: x509.SHA1WithRSA, sans: []net.IP{net.IPv4(127, 0, 0, 1)}, skipVerify: true, wantSHA1: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaf, leafKey := certificate(t, ca, caKey, tt.algorithm, false, tt.sans)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Raw}, PrivateKey: leafKey}}}
			srv.StartTLS()
			defer srv.Close()
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			counters := metrics.X509Counters{
				MissingSAN:   prometheus.NewCounter(prometheus.CounterOpts{Name: "missing_san"}),
				InsecureSHA1: prometheus.NewCounter(prometheus.CounterOpts{Name: "sha1"}),
			}
			rt := Wrap(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, InsecureSkipVerify: tt.skipVerify}}, counters)
			resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if got := value(t, counters.MissingSAN); got != tt.wantMissingSAN {
				t.Errorf("missing SAN counted %v, want %v (err %v)", got, tt.wantMissingSAN, err)
			}
			if got := value(t, counters.InsecureSHA1); got != tt.wantSHA1 {
				t.Errorf("SHA-1 counted %v, want %v (err %v)", got, tt.wantSHA1, err)
			}
		})
	}
}

// certificate makes a CA (isCA, self-signed) or a serving certificate for
// CN 127.0.0.1 signed by parent with the given algorithm.
func certificate(t *testing.T, parent *x509.Certificate, parentKey *rsa.PrivateKey, alg x509.SignatureAlgorithm, isCA bool, ips []net.IP) (*x509.Certificate, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		SignatureAlgorithm: alg, IPAddresses: ips, BasicConstraintsValid: true, IsCA: isCA,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if isCA {
		tmpl.Subject.CommonName = "ca"
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
