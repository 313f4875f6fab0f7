package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"syscall"
	"time"
)

// DialFunc dials a backend.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// NewTransports builds the two transports of a Handler for backends
// reached with tlsConfig (nil for plain HTTP) through dial (nil: a
// net.Dialer). The ordinary one keeps connections and may speak HTTP/2.
// The upgrade one speaks HTTP/1.1 only, since an upgrade is an HTTP/1.1
// exchange, and keeps no connection: a connection that carried an upgrade,
// refused or not, is never used again.
func NewTransports(tlsConfig *tls.Config, dial DialFunc) (ordinary, upgrade *http.Transport) {
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	ordinary = &http.Transport{
		DialContext: dial, TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 100, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
	}
	var upgradeTLS *tls.Config
	if tlsConfig != nil {
		upgradeTLS = tlsConfig.Clone()
		upgradeTLS.NextProtos = []string{"http/1.1"}
	}
	upgrade = &http.Transport{
		DialContext: dial, TLSClientConfig: upgradeTLS, DisableKeepAlives: true, TLSHandshakeTimeout: 10 * time.Second,
		// A non-nil empty map turns HTTP/2 off.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	return ordinary, upgrade
}

// errAddressNotAllowed is kube's text for a destination users may not reach.
var errAddressNotAllowed = errors.New("address not allowed")

// Proxyable checks, as kube checks a node's or a pod's address, that every
// address of host is a global unicast one: not loopback, link-local,
// multicast or unspecified, which would let a user reach the server's own
// machine through the proxy.
func Proxyable(ctx context.Context, resolver *net.Resolver, host string) error {
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsGlobalUnicast() {
			return errAddressNotAllowed
		}
		return nil
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return errors.New("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return errAddressNotAllowed
		}
	}
	return nil
}

// GlobalUnicastOnly is a net.Dialer Control function that refuses to
// connect anywhere but a global unicast address. Checked on the address
// actually dialled, it also holds when a name resolves differently at
// dial time than when Proxyable looked.
func GlobalUnicastOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsGlobalUnicast() {
		return errAddressNotAllowed
	}
	return nil
}
