package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
)

// SNICertKey is one --tls-sni-cert-key value: a certificate and key pair,
// and the server names it is served for. Without names, the names in the
// certificate (its common name and subject alternative names) are used.
type SNICertKey struct {
	CertFile, KeyFile string
	Names             []string
}

// ParseSNICertKey reads kube-apiserver's format: "cert,key" or
// "cert,key:name1,name2", where a name may start with a "*." wildcard label
// or be an IP address.
func ParseSNICertKey(value string) (SNICertKey, error) {
	pair, names, hasNames := strings.Cut(value, ":")
	cert, key, ok := strings.Cut(pair, ",")
	if !ok || cert == "" || key == "" || strings.Contains(key, ",") {
		return SNICertKey{}, fmt.Errorf("%q: expected certfile,keyfile optionally followed by :name1,name2", value)
	}
	s := SNICertKey{CertFile: cert, KeyFile: key}
	if hasNames {
		for _, n := range strings.Split(names, ",") {
			if n = strings.TrimSpace(n); n == "" {
				return SNICertKey{}, fmt.Errorf("%q: empty server name", value)
			}
			s.Names = append(s.Names, strings.ToLower(n))
		}
	}
	return s, nil
}

// CertSelector picks the serving certificate of a TLS handshake by the
// server name the client asked for, as kube-apiserver does: an exact name
// wins over a wildcard one, a name given on the command line over a name
// read from a certificate, an earlier --tls-sni-cert-key over a later one,
// and the default certificate serves everything else (and clients that
// send no server name, unless the address they dialled is named).
type CertSelector struct {
	defaultCert func() (*tls.Certificate, error)
	byName      map[string]*reloader
}

// NewCertSelector loads every SNI pair, failing on one that does not load.
// Each pair is read again when its files change, as the default one is.
func NewCertSelector(defaultCert func() (*tls.Certificate, error), sni []SNICertKey) (*CertSelector, error) {
	s := &CertSelector{defaultCert: defaultCert, byName: map[string]*reloader{}}
	type named struct {
		name     string
		explicit bool
		r        *reloader
	}
	var all []named
	for _, p := range sni {
		r, err := newReloader(p.CertFile, p.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-sni-cert-key %s,%s: %w", p.CertFile, p.KeyFile, err)
		}
		names, explicit := p.Names, true
		if len(names) == 0 {
			if names, err = certificateNames(r.cert); err != nil {
				return nil, fmt.Errorf("--tls-sni-cert-key %s: %w", p.CertFile, err)
			}
			explicit = false
		}
		for _, n := range names {
			all = append(all, named{n, explicit, r})
		}
	}
	// Names read from certificates first and later pairs first, so that
	// explicit names and earlier pairs overwrite them.
	for _, explicit := range []bool{false, true} {
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].explicit == explicit {
				s.byName[all[i].name] = all[i].r
			}
		}
	}
	return s, nil
}

// GetCertificate suits tls.Config.GetCertificate.
func (s *CertSelector) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if r := s.match(requestedName(hello)); r != nil {
		return r.current()
	}
	return s.defaultCert()
}

func (s *CertSelector) match(name string) *reloader {
	if name == "" || len(s.byName) == 0 {
		return nil
	}
	if r, ok := s.byName[name]; ok {
		return r
	}
	if _, rest, ok := strings.Cut(name, "."); ok {
		return s.byName["*."+rest]
	}
	return nil
}

// requestedName is the server name of the handshake, or the local address
// the client connected to when it sent none (clients send no SNI for IPs).
func requestedName(hello *tls.ClientHelloInfo) string {
	if hello == nil {
		return ""
	}
	if hello.ServerName != "" {
		return strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	}
	if hello.Conn == nil {
		return ""
	}
	if addr, ok := hello.Conn.LocalAddr().(*net.TCPAddr); ok {
		return addr.IP.String()
	}
	return ""
}

func certificateNames(c *tls.Certificate) ([]string, error) {
	leaf := c.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	var names []string
	if cn := leaf.Subject.CommonName; cn != "" && net.ParseIP(cn) == nil && !strings.ContainsAny(cn, " :/") {
		names = append(names, strings.ToLower(cn))
	}
	for _, d := range leaf.DNSNames {
		names = append(names, strings.ToLower(d))
	}
	for _, ip := range leaf.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return nil, errors.New("the certificate names no server: give the names after a colon")
	}
	return names, nil
}
