package conversion

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/lru"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capstan-io/capstan/internal/deprecatedcert"
	"github.com/capstan-io/capstan/metrics"
)

// ServiceResolver finds where to connect for a webhook given as a Service.
// Only the host (and port) of the answer is used; the TLS server name stays
// <name>.<namespace>.svc.
type ServiceResolver interface {
	ResolveEndpoint(namespace, name string, port int32) (*url.URL, error)
}

// DefaultServiceResolver resolves a Service to its cluster DNS name,
// https://<name>.<namespace>.svc:<port>.
type DefaultServiceResolver struct{}

// ResolveEndpoint implements ServiceResolver.
func (DefaultServiceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if name == "" || namespace == "" || port == 0 {
		return nil, errors.New("cannot resolve a service without a name, a namespace and a port")
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(name+"."+namespace+".svc", strconv.Itoa(int(port)))}, nil
}

// ClientCache shares webhook clients among converters, keyed by the
// webhook's clientConfig. It holds the 200 most recently built clients,
// kube's bound.
type ClientCache struct {
	clients *lru.Cache
}

// NewClientCache is an empty ClientCache.
func NewClientCache() *ClientCache {
	return &ClientCache{clients: lru.NewWithEvictionFunc(200, func(_ lru.Key, v any) {
		v.(*webhookClient).transport.CloseIdleConnections()
	})}
}

// webhookClient posts ConversionReviews to one webhook.
type webhookClient struct {
	// base is the webhook's URL without query.
	base      url.URL
	client    *http.Client
	transport *http.Transport
}

// webhookName is how kube names a CRD's webhook in its errors.
func webhookName(crdName string) string {
	return "conversion_webhook_for_" + crdName
}

// callError is kube's error for a webhook that cannot be called at all.
func callError(crdName string, reason error) error {
	return fmt.Errorf("failed calling webhook %q: %v", webhookName(crdName), reason)
}

// clientFor is the client of cfg, from opts.Clients when it has one.
func clientFor(crdName string, cfg *apiextv1.WebhookClientConfig, opts *Options) (*webhookClient, error) {
	caBundle := cfg.CABundle
	if len(bytes.TrimSpace(caBundle)) == 0 {
		// A caBundle of blanks is no caBundle.
		caBundle = nil
	}
	key := ""
	if opts.Clients != nil {
		k, err := json.Marshal(struct {
			URL      *string
			Service  *apiextv1.ServiceReference
			CABundle []byte
		}{cfg.URL, cfg.Service, caBundle})
		if err != nil {
			return nil, err
		}
		key = string(k)
		if c, ok := opts.Clients.clients.Get(key); ok {
			return c.(*webhookClient), nil
		}
	}
	c, err := newWebhookClient(crdName, cfg, caBundle, opts)
	if err != nil {
		return nil, err
	}
	if opts.Clients != nil {
		opts.Clients.clients.Add(key, c)
	}
	return c, nil
}

func newWebhookClient(crdName string, cfg *apiextv1.WebhookClientConfig, caBundle []byte, opts *Options) (*webhookClient, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if caBundle != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: no valid certificate authority data seen")
		}
		tlsConfig.RootCAs = pool
	}

	dial := opts.DialContext
	proxy := http.ProxyFromEnvironment
	if dial != nil {
		proxy = nil
	} else {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	transport := &http.Transport{
		Proxy:               proxy,
		DialContext:         dial,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 25,
	}
	c := &webhookClient{transport: transport, client: &http.Client{Transport: transport}}

	switch {
	case cfg.Service != nil:
		svc := cfg.Service
		port := int32(443)
		if svc.Port != nil && *svc.Port != 0 {
			port = *svc.Port
		}
		serverName := svc.Name + "." + svc.Namespace + ".svc"
		host := net.JoinHostPort(serverName, strconv.Itoa(int(port)))
		servicePath := ""
		if svc.Path != nil {
			servicePath = *svc.Path
		}
		c.base = url.URL{Scheme: "https", Host: host, Path: path.Join("/", servicePath)}
		tlsConfig.ServerName = serverName
		// HTTP/1.1, as kube: one HTTP/2 connection would take every
		// request to a single backend of the Service.
		tlsConfig.NextProtos = []string{"http/1.1"}
		resolver := opts.ServiceResolver
		if resolver == nil {
			resolver = DefaultServiceResolver{}
		}
		c.client.Transport = &serviceRoundTripper{
			next: transport, resolver: resolver, host: host,
			namespace: svc.Namespace, name: svc.Name, port: port,
		}
	case cfg.URL != nil && *cfg.URL != "":
		u, err := url.Parse(*cfg.URL)
		if err != nil {
			return nil, callError(crdName, fmt.Errorf("Unparsable URL: %v", err))
		}
		c.base = url.URL{Scheme: u.Scheme, Host: u.Host, Path: path.Join("/", u.Path)}
		if isLocalHost(u) {
			transport.ForceAttemptHTTP2 = true
		} else {
			tlsConfig.NextProtos = []string{"http/1.1"}
		}
	default:
		return nil, callError(crdName, errors.New("webhook configuration must have either service or URL"))
	}
	return c, nil
}

func isLocalHost(u *url.URL) bool {
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serviceRoundTripper sends the requests for a Service's DNS name to the
// address its resolver gives, resolved anew for every request so that a
// request follows the Service's endpoints; the TLS server name and the Host
// header stay the Service's name.
type serviceRoundTripper struct {
	next      http.RoundTripper
	resolver  ServiceResolver
	host      string
	namespace string
	name      string
	port      int32
}

func (rt *serviceRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != rt.host {
		return rt.next.RoundTrip(req)
	}
	u, err := rt.resolver.ResolveEndpoint(rt.namespace, rt.name, rt.port)
	if err != nil {
		return nil, err
	}
	resolved := req.Clone(req.Context())
	if resolved.Host == "" {
		resolved.Host = req.URL.Host
	}
	resolved.URL.Host = u.Host
	return rt.next.RoundTrip(resolved)
}

// maxErrorBodyBytes bounds the part of an error answer put into the error,
// as kube's REST client does.
const maxErrorBodyBytes = 2048

// post sends body to the webhook and returns its 2xx answer. Every other
// outcome is an error with the message kube's REST client would give.
//
// timeout bounds the call as kube's REST client bounds it: as the
// http.Client's Timeout, whose expiry the error tells ("Client.Timeout
// exceeded while awaiting headers").
func (c *webhookClient) post(ctx context.Context, body []byte, timeout time.Duration, maxBytes int64) ([]byte, error) {
	client := *c.client
	client.Timeout = timeout
	u := c.base
	u.RawQuery = url.Values{"timeout": []string{timeout.String()}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	req.Header.Set("User-Agent", "kube-apiserver-admission")

	resp, err := client.Do(req)
	deprecatedcert.Observe(req, resp, err, metrics.WebhookX509)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var reader io.Reader = resp.Body
	if maxBytes > 0 {
		reader = io.LimitReader(resp.Body, maxBytes+1)
	}
	data, err := io.ReadAll(reader)
	if err != nil {
		return nil, fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", err)
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("the response of the webhook is larger than %d bytes", maxBytes)
	}

	contentType := resp.Header.Get("Content-Type")
	if contentType == "" {
		contentType = "application/json"
	}
	if _, _, err := mime.ParseMediaType(contentType); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		return nil, responseError(resp, data)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("0-length response with status code: %d and content type: %s", resp.StatusCode, contentType)
	}
	return data, nil
}

// responseError is the error of a non-2xx answer: the Status in its body
// when it has one, else kube's generic error for the HTTP status code.
func responseError(resp *http.Response, body []byte) error {
	var status metav1.Status
	if json.Unmarshal(body, &status) == nil && status.Kind == "Status" &&
		(status.APIVersion == "" || status.APIVersion == "v1") && status.Status == metav1.StatusFailure {
		return apierrors.FromObject(&status)
	}
	if len(body) > maxErrorBodyBytes {
		body = body[:maxErrorBodyBytes]
	}
	message := "unknown"
	if isTextResponse(resp) {
		message = strings.TrimSpace(string(body))
	}
	retryAfter := 0
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			retryAfter = n
		}
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", message, retryAfter, true)
}

func isTextResponse(resp *http.Response) bool {
	contentType := resp.Header.Get("Content-Type")
	if contentType == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.HasPrefix(media, "text/")
}
