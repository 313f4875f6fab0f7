package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/capstan-io/capstan/internal/deprecatedcert"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/tracing"
)

// ServiceResolver finds the address that serves a Service's port: its
// cluster IP or ExternalName host by default, an endpoint with aggregator
// routing, as kube resolves webhook services.
type ServiceResolver func(ctx context.Context, namespace, name string, port int32) (*url.URL, error)

// client calls one webhook. Its transport keeps connections alive between
// calls; configurations with the same clientConfig share it.
type client struct {
	http    *http.Client
	base    *url.URL // the webhook's URL; for a service, https://name.namespace.svc:port/path
	service bool
	key     string // its clientConfig, as clients knows it
	auth    *auth  // the credentials of the WebhookAdmission kubeconfig
	// transport is http's, under client-go's credential wrappers if any.
	transport *http.Transport
}

// clients hands out clients by clientConfig, so that a configuration's
// new generation keeps the connections of its unchanged webhooks.
type clients struct {
	resolve ServiceResolver
	creds   *Credentials
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex // guards the fields below
	byKey map[string]*client
	used  map[string]bool // the keys the last rebuild used
}

func newClients(resolve ServiceResolver, creds *Credentials) *clients {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &clients{resolve: resolve, creds: creds, dial: d.DialContext, byKey: map[string]*client{}, used: map[string]bool{}}
}

func (cs *clients) get(cc arv1.WebhookClientConfig) (*client, error) {
	key, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.used[string(key)] = true
	if c := cs.byKey[string(key)]; c != nil {
		return c, nil
	}
	c, err := cs.newClient(cc)
	if err != nil {
		return nil, err
	}
	c.key = string(key)
	cs.byKey[c.key] = c
	return c, nil
}

// keep marks c as used by the rebuild in progress.
func (cs *clients) keep(c *client) {
	if c == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.used[c.key] = true
}

// sweep closes the clients the last rebuild did not use.
func (cs *clients) sweep() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for key, c := range cs.byKey {
		if !cs.used[key] {
			c.transport.CloseIdleConnections()
			delete(cs.byKey, key)
		}
	}
	cs.used = map[string]bool{}
}

func (cs *clients) newClient(cc arv1.WebhookClientConfig) (*client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return nil, errors.New("caBundle holds no PEM certificates")
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 100,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, DialContext: cs.dial}
	c := &client{http: &http.Client{Transport: tracing.Transport(deprecatedcert.Wrap(transport, metrics.WebhookX509))}, transport: transport}
	if cc.Service != nil {
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		serverName := cc.Service.Name + "." + cc.Service.Namespace + ".svc"
		host := net.JoinHostPort(serverName, strconv.Itoa(int(port)))
		path := ""
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		c.base, c.service = &url.URL{Scheme: "https", Host: host, Path: path}, true
		tlsConfig.ServerName = serverName
		if err := cs.authenticate(c, tlsConfig, host); err != nil {
			return nil, err
		}
		// A service is reached over HTTP/1.1 at the address the resolver
		// gives for its name, as kube dials it.
		ns, name := cc.Service.Namespace, cc.Service.Name
		transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == host {
				u, err := cs.resolve(ctx, ns, name, port)
				if err != nil {
					return nil, err
				}
				addr = u.Host
			}
			return cs.dial(ctx, network, addr)
		}
		return c, nil
	}
	if cc.URL == nil {
		return nil, errors.New("webhook configuration must have either service or URL")
	}
	u, err := url.Parse(*cc.URL)
	if err != nil {
		return nil, fmt.Errorf("Unparsable URL: %w", err)
	}
	c.base = u
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "443")
	}
	if err := cs.authenticate(c, tlsConfig, target); err != nil {
		return nil, err
	}
	// Like kube, HTTP/2 only to a webhook on this machine.
	transport.ForceAttemptHTTP2 = isLocalHost(u)
	return c, nil
}

// authenticate gives c the credentials of target's kubeconfig user.
func (cs *clients) authenticate(c *client, tlsConfig *tls.Config, target string) error {
	a, err := authOf(cs.creds.user(target))
	if err != nil {
		return err
	}
	if a.certificate != nil {
		tlsConfig.Certificates = []tls.Certificate{*a.certificate}
	}
	c.auth = a
	if a.wrap != nil {
		rt, err := a.wrap(c.http.Transport)
		if err != nil {
			return err
		}
		c.http.Transport = rt
	}
	return nil
}

func isLocalHost(u *url.URL) bool {
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
