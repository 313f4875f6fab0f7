// Package kubernetesservice keeps the kubernetes Service of the default
// namespace, through which pods reach the API server, as kube's bootstrap
// controller does: the Service (cluster IP = the first address of
// --service-cluster-ip-range, port 443 "https" to the secure port) and its
// Endpoints and EndpointSlice listing every live server.
//
// Each server holds a lease, an Endpoints object with its address stored
// under /masterleases/<ip> with a time to live, as kube's lease endpoint
// reconciler does; the kubernetes Endpoints list the addresses of the live
// leases. A server whose address is loopback, link-local or unspecified
// (a server bound to 127.0.0.1 without --advertise-address) keeps no
// endpoints: kube's validation refuses such addresses in Endpoints, and no
// pod could reach them.
package kubernetesservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/storage"
)

// Name is the name of the Service, in the default namespace.
const Name = "kubernetes"

// Config is what the controller needs.
type Config struct {
	Client kubernetes.Interface
	// ServiceIP is the Service's cluster IP; ServicePort its port (443).
	ServiceIP   net.IP
	ServicePort int
	// PublicIP and PublicPort are where pods reach this server.
	PublicIP   net.IP
	PublicPort int
	// Leases stores the servers' leases, keys under /masterleases.
	Leases storage.Interface
	// NoEndpoints leaves the endpoints to others
	// (--endpoint-reconciler-type=none).
	NoEndpoints bool
	Interval    time.Duration // between reconciliations; 10s in kube
	LeaseTTL    time.Duration // 15s in kube
	Logger      *slog.Logger
}

// Controller keeps the kubernetes Service and its endpoints.
type Controller struct {
	Config
}

// New returns a controller.
func New(c Config) *Controller { return &Controller{Config: c} }

// KeepsEndpoints reports whether this server keeps its address in the
// endpoints: its reconciler is on and its address may be an endpoint.
func (c *Controller) KeepsEndpoints() bool {
	if c.NoEndpoints {
		return false
	}
	ip := c.PublicIP
	return ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast()
}

// EnsureService creates the Service if it is missing; an existing one is
// left as it is, as kube does.
func (c *Controller) EnsureService(ctx context.Context) error {
	services := c.Client.CoreV1().Services(metav1.NamespaceDefault)
	if _, err := services.Get(ctx, Name, metav1.GetOptions{}); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"provider": "kubernetes", "component": "apiserver"}},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP,
				Port: int32(c.ServicePort), TargetPort: intstr.FromInt32(int32(c.PublicPort))}},
			ClusterIP:       c.ServiceIP.String(),
			IPFamilyPolicy:  ptr(corev1.IPFamilyPolicySingleStack),
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	_, err := services.Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Run reconciles every Interval until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		if err := c.Reconcile(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Warn("unable to sync the kubernetes service", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile ensures the Service, renews this server's lease and rewrites
// the endpoints from the live leases.
func (c *Controller) Reconcile(ctx context.Context) error {
	if err := c.EnsureService(ctx); err != nil {
		return err
	}
	if !c.KeepsEndpoints() {
		return nil
	}
	if err := c.renewLease(ctx); err != nil {
		return fmt.Errorf("renewing the lease of %s: %w", c.PublicIP, err)
	}
	return c.syncEndpoints(ctx, false)
}

// Stop removes this server's lease and its address from the endpoints, as
// a server shutting down must.
func (c *Controller) Stop(ctx context.Context) error {
	if !c.KeepsEndpoints() {
		return nil
	}
	err := c.Leases.Delete(ctx, c.leaseKey(), &corev1.Endpoints{}, nil, nil, nil)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return c.syncEndpoints(ctx, true)
}

func (c *Controller) leaseKey() string { return leasePrefix + c.PublicIP.String() }

const leasePrefix = "/masterleases/"

// renewLease writes this server's lease with a fresh time to live.
func (c *Controller) renewLease(ctx context.Context) error {
	ttl := uint64(c.LeaseTTL / time.Second)
	ip := c.PublicIP.String()
	return c.Leases.GuaranteedUpdate(ctx, c.leaseKey(), &corev1.Endpoints{}, true, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			ep := in.(*corev1.Endpoints)
			ep.Subsets = []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}}}
			ep.Generation++
			return ep, &ttl, nil
		}, nil)
}

// liveAddresses are the addresses of the servers holding a lease.
func (c *Controller) liveAddresses(ctx context.Context) ([]string, error) {
	list := &corev1.EndpointsList{}
	opts := storage.ListOptions{ResourceVersion: "0", Recursive: true}
	if err := c.Leases.GetList(ctx, leasePrefix, opts, list); err != nil {
		return nil, err
	}
	var ips []string
	for _, ep := range list.Items {
		if len(ep.Subsets) > 0 && len(ep.Subsets[0].Addresses) > 0 && ep.Subsets[0].Addresses[0].IP != "" {
			ips = append(ips, ep.Subsets[0].Addresses[0].IP)
		}
	}
	return ips, nil
}

func (c *Controller) endpointPorts() []corev1.EndpointPort {
	return []corev1.EndpointPort{{Name: "https", Port: int32(c.PublicPort), Protocol: corev1.ProtocolTCP}}
}

func ptr[T any](v T) *T { return &v }
