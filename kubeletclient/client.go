// Package kubeletclient is how the server reaches kubelets: which address
// and port of a Node to dial (kube's --kubelet-preferred-address-types and
// the port the kubelet reports), and the TLS transports that carry the
// node-facing subresources (pods/log, exec, attach, portforward and
// nodes/proxy), with the client certificate of --kubelet-client-certificate
// and the CA of --kubelet-certificate-authority; and the transports of the
// cluster network, to pods, services and nodes' other ports.
package kubeletclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/proxy"
)

// Config is the --kubelet-* flags.
type Config struct {
	// Port is dialled when a node reports no kubelet port (--kubelet-port).
	Port uint
	// PreferredAddressTypes order the node addresses tried.
	PreferredAddressTypes []string
	// CertFile and KeyFile are the client certificate kubelets see; CAFile
	// verifies kubelets' serving certificates. Without a CA, as in kube,
	// kubelets' certificates are not verified.
	CertFile, KeyFile, CAFile string
	// Timeout bounds dialling a kubelet and its TLS handshake (kube accepts
	// --kubelet-timeout and leaves it unused).
	Timeout time.Duration
	// Dial, when set, makes every connection to kubelets, nodes, pods and
	// services: the cluster network, as kube's egress selector's cluster
	// dialer. Nil dials directly.
	Dial proxy.DialFunc
}

// Client finds kubelets and carries requests to them. It is safe for
// concurrent use.
type Client struct {
	port  int
	types []corev1.NodeAddressType
	// secure verifies kubelets with the CA when there is one; insecure
	// never does (PodLogOptions.insecureSkipTLSVerifyBackend).
	secure, insecure transports
	// cluster reaches pods, services and nodes' other ports: plain HTTP,
	// or TLS that verifies nothing, since an IP names no certificate.
	cluster transports
}

// transports are a proxy.Handler's two transports.
type transports struct{ ordinary, upgrade *http.Transport }

// New builds a Client, reading the certificate files once.
func New(c Config) (*Client, error) {
	base := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CertFile != "" || c.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("kubelet client certificate: %w", err)
		}
		base.Certificates = []tls.Certificate{cert}
	}
	insecureTLS := base.Clone()
	insecureTLS.InsecureSkipVerify = true
	secureTLS := insecureTLS
	if c.CAFile != "" {
		data, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kubelet certificate authority: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("kubelet certificate authority: no certificates in %s", c.CAFile)
		}
		secureTLS = base.Clone()
		secureTLS.RootCAs = pool
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	cl := &Client{port: int(c.Port)}
	for _, t := range c.PreferredAddressTypes {
		cl.types = append(cl.types, corev1.NodeAddressType(t))
	}
	cl.secure = newTransports(secureTLS, dial, timeout)
	cl.insecure = newTransports(insecureTLS, dial, timeout)
	cl.cluster = newTransports(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, c.Dial, 10*time.Second)
	return cl, nil
}

func newTransports(cfg *tls.Config, dial proxy.DialFunc, timeout time.Duration) transports {
	ordinary, upgrade := proxy.NewTransports(cfg, dial)
	ordinary.TLSHandshakeTimeout, upgrade.TLSHandshakeTimeout = timeout, timeout
	return transports{ordinary: ordinary, upgrade: upgrade}
}

// NodeGetter reads a Node; its errors (NotFound) reach the client as they are.
type NodeGetter interface {
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
}

// Connection is how to reach one node's kubelet.
type Connection struct {
	// Host is the kubelet's host and port.
	Host string
	// Hostname is the address chosen, without the port.
	Hostname string
	// Transport and UpgradeTransport carry ordinary and upgrade requests.
	Transport, UpgradeTransport http.RoundTripper
	// Features are the features the node declares (status.declaredFeatures).
	Features []string
}

// Cluster are the transports of ordinary and upgrade requests to pods,
// services and nodes' ports other than the kubelet's.
func (c *Client) Cluster() (ordinary, upgrade http.RoundTripper) {
	return c.cluster.ordinary, c.cluster.upgrade
}

// URL is the kubelet's https URL of path and query.
func (c *Connection) URL(path string, query url.Values) *url.URL {
	return &url.URL{Scheme: "https", Host: c.Host, Path: path, RawQuery: query.Encode()}
}

// Connect finds the kubelet of node nodeName. insecureSkipVerify chooses
// the transports that do not verify the kubelet's certificate.
func (c *Client) Connect(ctx context.Context, nodes NodeGetter, nodeName string, insecureSkipVerify bool) (*Connection, error) {
	node, err := nodes.GetNode(ctx, nodeName)
	if err != nil {
		return nil, err
	}
	host, err := PreferredAddress(node, c.types)
	if err != nil {
		return nil, err
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = c.port
	}
	t := c.secure
	if insecureSkipVerify {
		t = c.insecure
	}
	return &Connection{Host: net.JoinHostPort(host, strconv.Itoa(port)), Hostname: host, Transport: t.ordinary, UpgradeTransport: t.upgrade,
		Features: node.Status.DeclaredFeatures}, nil
}

// PreferredAddress is the node's first address of the first type in
// types that it has, as kube chooses it.
func PreferredAddress(node *corev1.Node, types []corev1.NodeAddressType) (string, error) {
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address, nil
			}
		}
	}
	return "", &NoMatchError{Addresses: node.Status.Addresses}
}

// NoMatchError is a node without an address of a preferred type.
type NoMatchError struct{ Addresses []corev1.NodeAddress }

func (e *NoMatchError) Error() string {
	return fmt.Sprintf("no preferred addresses found; known addresses: %v", e.Addresses)
}

// IsNoMatch reports whether err is a NoMatchError.
func IsNoMatch(err error) bool {
	var e *NoMatchError
	return errors.As(err, &e)
}
