package loadtest

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ContentTypes maps the --content-type flag's values to media types.
var ContentTypes = map[string]string{
	"protobuf": "application/vnd.kubernetes.protobuf",
	"json":     "application/json",
}

// Client is the clients a run uses, with a count of WatchList requests so
// that the informer workload can tell whether the server streamed its list.
type Client struct {
	Config     *rest.Config
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface // JSON, for CRDs and custom resources
	watchLists atomic.Int64
}

// NewClient loads kubeconfig. Unless allowRemote, the server must be on a
// loopback address. Client-side rate limiting is off: the server is what
// is measured.
func NewClient(kubeconfig, contentType string, allowRemote bool) (*Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	if !allowRemote {
		if err := CheckLoopback(cfg.Host); err != nil {
			return nil, err
		}
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.UserAgent = "capstan-load"
	media, ok := ContentTypes[contentType]
	if !ok {
		return nil, fmt.Errorf("unknown content type %q (protobuf or json)", contentType)
	}
	cfg.ContentType = media
	cfg.AcceptContentTypes = media + ",application/json"
	c := &Client{Config: cfg}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("sendInitialEvents") == "true" {
				c.watchLists.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return c, nil
}

// WatchLists is how many WatchList requests (sendInitialEvents=true) were sent.
func (c *Client) WatchLists() int64 { return c.watchLists.Load() }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CheckLoopback fails unless rawURL's host is a loopback address or
// "localhost".
func CheckLoopback(rawURL string) error {
	if !strings.Contains(rawURL, "://") {
		rawURL = "https://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address (pass --allow-remote to load another machine)", host)
}
