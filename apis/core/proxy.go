package core

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/proxy/serviceresolver"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Proxies are what pods/proxy, services/proxy and nodes/proxy read: the
// pods, nodes and kubelets of Kubelets, the Services and their
// EndpointSlices.
type Proxies struct {
	*Kubelets
	Services *registry.Store
	Slices   serviceresolver.SliceLister
	// Family is the cluster's primary IP family, whose endpoints a
	// Service proxy tries first.
	Family corev1.IPFamily
}

// proxyMethods are the methods kube proxies.
var proxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// ProxyREST serves one of the proxy subresources: the request, with the
// path after .../proxy, goes to the address locate finds for the name
// ("name", "name:port" or "scheme:name:port").
type ProxyREST struct {
	kind    string
	options func() runtime.Object
	locate  func(ctx context.Context, id string) (*url.URL, transports, error)
}

// transports carry ordinary and upgrade requests to one destination.
type transports struct{ ordinary, upgrade http.RoundTripper }

var (
	_ rest.Connecter = (*ProxyREST)(nil)
	_ rest.Scoper    = (*ProxyREST)(nil)
)

// NewPodProxyREST returns the storage of pods/proxy.
func NewPodProxyREST(p *Proxies) *ProxyREST {
	return &ProxyREST{kind: "Pod", options: func() runtime.Object { return &corev1.PodProxyOptions{} }, locate: p.podLocation}
}

// NewNodeProxyREST returns the storage of nodes/proxy.
func NewNodeProxyREST(p *Proxies) *ProxyREST {
	return &ProxyREST{kind: "Node", options: func() runtime.Object { return &corev1.NodeProxyOptions{} }, locate: p.nodeLocation}
}

// NewServiceProxyREST returns the storage of services/proxy.
func NewServiceProxyREST(p *Proxies) *ProxyREST {
	return &ProxyREST{kind: "Service", options: func() runtime.Object { return &corev1.ServiceProxyOptions{} }, locate: p.serviceLocation}
}

// New returns empty options, the kind kube's discovery names.
func (r *ProxyREST) New() runtime.Object { return r.options() }

// NamespaceScoped is false for nodes.
func (r *ProxyREST) NamespaceScoped() bool { return r.kind != "Node" }

// NewConnectOptions returns empty options, whose path is the request's
// path after .../proxy.
func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return r.options(), true, "path"
}

// ConnectMethods are every method kube proxies.
func (*ProxyREST) ConnectMethods() []string { return proxyMethods }

// Connect finds the destination and returns the proxy to it.
func (r *ProxyREST) Connect(ctx context.Context, id string, obj runtime.Object) (http.Handler, error) {
	var subpath string
	switch o := obj.(type) {
	case *corev1.PodProxyOptions:
		subpath = o.Path
	case *corev1.NodeProxyOptions:
		subpath = o.Path
	case *corev1.ServiceProxyOptions:
		subpath = o.Path
	default:
		return nil, fmt.Errorf("invalid options object: %T", obj)
	}
	loc, t, err := r.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	loc.Path = utilnet.JoinPreservingTrailingSlash(loc.Path, subpath)
	return &proxy.Subresource{Location: loc, Transport: t.ordinary, UpgradeTransport: t.upgrade}, nil
}

func (p *Proxies) cluster() transports {
	ordinary, upgrade := p.Client.Cluster()
	return transports{ordinary: ordinary, upgrade: upgrade}
}

// podLocation is the pod's first IP at the port asked for or its first
// container port. Only a global unicast IP is proxied to: a pod's status
// is written by its node, and must not turn the proxy toward the server's
// own loopback or link-local addresses.
func (p *Proxies) podLocation(ctx context.Context, id string) (*url.URL, transports, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(id)
	if !ok {
		return nil, transports{}, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	pod, err := p.pod(ctx, name)
	if err != nil {
		return nil, transports{}, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	var podIP string
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, transports{}, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	if port != "" {
		loc.Host = net.JoinHostPort(podIP, port)
	} else if ip := net.ParseIP(podIP); ip.To4() == nil {
		loc.Host = "[" + podIP + "]"
	}
	return loc, p.cluster(), nil
}

// nodeLocation is the node's kubelet (https with the kubelet client's
// certificate) when no port or the kubelet's is asked for, and another
// port of the node's address through the cluster network otherwise. The
// address must resolve to global unicast addresses only.
func (p *Proxies) nodeLocation(ctx context.Context, id string) (*url.URL, transports, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(id)
	if !ok {
		return nil, transports{}, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	conn, err := p.Client.Connect(ctx, p, name, false)
	if err != nil {
		return nil, transports{}, err
	}
	if err := proxy.Proxyable(ctx, nil, conn.Hostname); err != nil {
		return nil, transports{}, apierrors.NewBadRequest(err.Error())
	}
	_, kubeletPort, _ := net.SplitHostPort(conn.Host)
	if port == "" || port == kubeletPort {
		return conn.URL("", nil), transports{ordinary: conn.Transport, upgrade: conn.UpgradeTransport}, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(conn.Hostname, port)}, p.cluster(), nil
}

// serviceLocation is a ready endpoint of the Service's port (by number or
// name), chosen at random among those that are the IPs of pods of the
// Service's namespace: an EndpointSlice is written by users, and must not
// turn the proxy toward an address no pod has.
func (p *Proxies) serviceLocation(ctx context.Context, id string) (*url.URL, transports, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(id)
	if !ok {
		return nil, transports{}, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		if port, err = p.servicePortName(ctx, name, n); err != nil {
			return nil, transports{}, err
		}
	}
	none := apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	if p.Slices == nil {
		return nil, transports{}, none
	}
	namespace := request.NamespaceFrom(ctx)
	if namespace == "" {
		return nil, transports{}, apierrors.NewBadRequest("missing required namespace")
	}
	slices, err := p.Slices(ctx, namespace, name)
	if err != nil {
		return nil, transports{}, apierrors.NewInternalError(err)
	}
	if len(slices) == 0 {
		return nil, transports{}, none
	}
	hostPort, err := serviceresolver.RandomEndpoint(name, slices, port, discoveryv1.AddressType(p.Family),
		func(ep *discoveryv1.Endpoint) bool { return p.isPodEndpoint(ctx, namespace, ep) })
	if err != nil {
		return nil, transports{}, err
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, p.cluster(), nil
}

// servicePortName is the name of the Service's port number n.
func (p *Proxies) servicePortName(ctx context.Context, service string, n int64) (string, error) {
	obj, err := p.Services.Get(ctx, service, &metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return "", fmt.Errorf("unexpected object %T in the services store", obj)
	}
	for _, sp := range svc.Spec.Ports {
		if int64(sp.Port) == n {
			return sp.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, service))
}

// isPodEndpoint reports whether ep names a pod of namespace whose IPs
// include the endpoint's address.
func (p *Proxies) isPodEndpoint(ctx context.Context, namespace string, ep *discoveryv1.Endpoint) bool {
	if ep.TargetRef == nil || ep.TargetRef.Namespace != namespace {
		return false
	}
	pod, err := p.pod(ctx, ep.TargetRef.Name)
	if err != nil {
		return false
	}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == ep.Addresses[0] {
			return true
		}
	}
	return false
}
