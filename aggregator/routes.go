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
	"github.com/capstan-io/capstan/proxy"
)

// remote is how requests for a remote APIService's group version travel.
type remote struct {
	name               string // the APIService's
	namespace, service string
	port               int32
	available          bool
	// transport and upgrade reach the Service over TLS verified by
	// caBundle, with the front-proxy client certificate; err, when set, is
	// why they could not be built, told to clients.
	transport, upgrade *http.Transport
	err                error
	tls                tlsKey // what transport was built from
}

// routes holds the remote APIServices by group version.
type routes struct {
	cert *clientCert // nil without --proxy-client-cert-file

	mu   sync.RWMutex // guards byGV
	byGV map[schema.GroupVersion]*remote
}

func newRoutes(cert *clientCert) *routes {
	return &routes{cert: cert, byGV: map[schema.GroupVersion]*remote{}}
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
		closeIdle(old)
		return
	}
	s := svc.Spec.Service
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	t := &remote{name: svc.Name, namespace: s.Namespace, service: s.Name, port: port, available: apiregistration.IsAvailable(svc)}
	t.tls = tlsKeyOf(svc)
	if old != nil && old.namespace == t.namespace && old.service == t.service && old.tls == t.tls {
		t.transport, t.upgrade, t.err = old.transport, old.upgrade, old.err
	} else {
		closeIdle(old)
		t.transport, t.upgrade, t.err = r.transports(svc)
	}
	r.byGV[gv] = t
}

// remove drops the route of a deleted APIService.
func (r *routes) remove(svc *apiregv1.APIService) {
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.byGV[gv]; t != nil && t.name == svc.Name {
		closeIdle(t)
		delete(r.byGV, gv)
	}
}

func closeIdle(t *remote) {
	if t != nil && t.transport != nil {
		t.transport.CloseIdleConnections()
	}
}

// tlsKey is what the transports of an APIService depend on.
type tlsKey struct {
	insecure bool
	ca       string
}

func tlsKeyOf(svc *apiregv1.APIService) tlsKey {
	return tlsKey{insecure: svc.Spec.InsecureSkipTLSVerify, ca: string(svc.Spec.CABundle)}
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
