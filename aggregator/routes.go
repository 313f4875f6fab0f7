package aggregator

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/apis/apiregistration"
	"github.com/capstan-io/capstan/internal/deprecatedcert"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/tracing"
)

// remote is how requests for a remote APIService's group version travel.
type remote struct {
	name               string // the APIService's
	namespace, service string
	port               int32
	available          bool
	// transport and upgrade reach the Service over TLS verified by
	// caBundle, with the front-proxy client certificate; err, when set, is
	// why they could not be built, told to clients. They are shared with
	// the routes of the same tls (routes.shared).
	transport, upgrade *http.Transport
	// traced is transport passing a traced request's trace on.
	traced http.RoundTripper
	err    error
	tls    tlsKey // what transport was built from
}

// routes holds the remote APIServices by group version.
type routes struct {
	cert *clientCert // nil without --proxy-client-cert-file

	mu   sync.RWMutex // guards the fields below
	byGV map[schema.GroupVersion]*remote
	// shared holds the transports by what they are built from: the
	// APIServices of one Service with the same TLS settings (the versions
	// of one extension server) share its connections, as kube's transport
	// cache shares them.
	shared map[tlsKey]*sharedTransports
}

// sharedTransports are the transports of the routes with one tlsKey.
type sharedTransports struct {
	transport, upgrade *http.Transport
	traced             http.RoundTripper
	err                error
	users              int
}

func newRoutes(cert *clientCert) *routes {
	return &routes{cert: cert, byGV: map[schema.GroupVersion]*remote{}, shared: map[tlsKey]*sharedTransports{}}
}

func (r *routes) get(gv schema.GroupVersion) *remote {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byGV[gv]
}

// all returns the remote APIServices.
func (r *routes) all() []*remote {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*remote, 0, len(r.byGV))
	for _, t := range r.byGV {
		out = append(out, t)
	}
	return out
}

// set follows a change of svc: a remote one gets a route (its transports
// rebuilt when its connection settings changed), a local one none.
func (r *routes) set(svc *apiregv1.APIService) {
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.byGV[gv]
	if svc.Spec.Service == nil {
		delete(r.byGV, gv)
		r.releaseLocked(old)
		return
	}
	s := svc.Spec.Service
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	t := &remote{name: svc.Name, namespace: s.Namespace, service: s.Name, port: port, available: apiregistration.IsAvailable(svc)}
	t.tls = tlsKeyOf(svc)
	shared := r.shared[t.tls]
	if shared == nil {
		shared = &sharedTransports{}
		shared.transport, shared.upgrade, shared.err = r.transports(svc)
		if shared.transport != nil {
			shared.traced = tracing.Transport(deprecatedcert.Wrap(shared.transport, metrics.AggregatorX509))
		}
		r.shared[t.tls] = shared
	}
	shared.users++
	t.transport, t.upgrade, t.traced, t.err = shared.transport, shared.upgrade, shared.traced, shared.err
	r.byGV[gv] = t
	r.releaseLocked(old)
}

// setAvailable records the result of svc's latest availability check on
// its route. A route is read without the lock once got, so it is replaced,
// not changed.
func (r *routes) setAvailable(svc *apiregv1.APIService, available bool) {
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.byGV[gv]
	if t == nil || t.name != svc.Name || t.available == available {
		return
	}
	updated := *t
	updated.available = available
	r.byGV[gv] = &updated
}

// remove drops the route of a deleted APIService.
func (r *routes) remove(svc *apiregv1.APIService) {
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.byGV[gv]; t != nil && t.name == svc.Name {
		delete(r.byGV, gv)
		r.releaseLocked(t)
	}
}

// releaseLocked drops t's use of its transports, closing their idle
// connections when no route uses them any more.
func (r *routes) releaseLocked(t *remote) {
	if t == nil {
		return
	}
	shared := r.shared[t.tls]
	if shared == nil {
		return
	}
	if shared.users--; shared.users > 0 {
		return
	}
	delete(r.shared, t.tls)
	if shared.transport != nil {
		shared.transport.CloseIdleConnections()
	}
}

// tlsKey is what the transports of an APIService depend on: its Service
// (the name TLS verifies) and its TLS settings.
type tlsKey struct {
	namespace, service string
	insecure           bool
	ca                 string
}

func tlsKeyOf(svc *apiregv1.APIService) tlsKey {
	return tlsKey{namespace: svc.Spec.Service.Namespace, service: svc.Spec.Service.Name,
		insecure: svc.Spec.InsecureSkipTLSVerify, ca: string(svc.Spec.CABundle)}
}

// transports are kube's for an APIService: TLS for the Service's DNS name,
// verified by caBundle (or not at all with insecureSkipTLSVerify), with the
// front-proxy client certificate.
func (r *routes) transports(svc *apiregv1.APIService) (*http.Transport, *http.Transport, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: svc.Spec.Service.Name + "." + svc.Spec.Service.Namespace + ".svc",
		InsecureSkipVerify: svc.Spec.InsecureSkipTLSVerify, GetClientCertificate: r.cert.get}
	if len(svc.Spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(svc.Spec.CABundle) {
			return nil, nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		cfg.RootCAs = pool
	}
	ordinary, upgrade := proxy.NewTransports(cfg, nil)
	return ordinary, upgrade, nil
}
