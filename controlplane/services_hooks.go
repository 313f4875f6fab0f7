package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane/allocators/clusterip"
	"github.com/capstan-io/capstan/controlplane/allocators/nodeport"
	"github.com/capstan-io/capstan/controlplane/controllers/kubernetesservice"
	"github.com/capstan-io/capstan/server"
)

// Intervals of the service controllers, kube's.
const (
	defaultRepairInterval   = 3 * time.Minute
	serviceCIDRSyncInterval = 10 * time.Second
	endpointInterval        = 10 * time.Second
	endpointLeaseTTL        = 15 * time.Second
	// firstSyncTimeout bounds how long readiness waits for a hook's first
	// success before the hook fails, as kube's repair hook does.
	firstSyncTimeout = time.Minute
)

// addServiceHooks registers, under kube's names, the default ServiceCIDR
// controller, the repair of cluster IPs and node ports, and the kubernetes
// Service controller. /readyz waits for the first success of each.
func (c Config) addServiceHooks(s *server.Server, b *servicesBuilt, serviceIP net.IP) {
	// The repairs and the kubernetes Service need the default ServiceCIDR:
	// they start once its first sync has ended, rather than polling for it.
	cidrSynced := make(chan struct{})
	s.AddPostStartHook("start-kubernetes-service-cidr-controller", func(hc server.HookContext) error {
		defer close(cidrSynced)
		return c.runDefaultServiceCIDR(hc)
	})
	s.AddPostStartHook("start-service-ip-repair-controllers", func(hc server.HookContext) error {
		if err := waitFor(hc, cidrSynced); err != nil {
			return err
		}
		return c.runServiceRepairs(hc, b)
	})
	var ctrl atomic.Pointer[kubernetesservice.Controller]
	s.AddPostStartHook("bootstrap-controller", func(hc server.HookContext) error {
		// The kubernetes Service lives in the default namespace.
		if err := errors.Join(waitFor(hc, cidrSynced), waitFor(hc, c.systemNamespacesDone)); err != nil {
			return err
		}
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		k := kubernetesservice.New(kubernetesservice.Config{
			Client: client, ServiceIP: serviceIP, ServicePort: 443,
			PublicIP: c.Services.PublicIP, PublicPort: c.Services.PublicPort,
			Leases: b.leases, NoEndpoints: c.Services.NoEndpointReconciler, Interval: endpointInterval, LeaseTTL: endpointLeaseTTL,
			Logger: c.Logger.With("controller", "kubernetes-service"),
		})
		if !k.KeepsEndpoints() && !c.Services.NoEndpointReconciler {
			c.Logger.Info("the kubernetes service gets no endpoints: the advertised address is not reachable from pods",
				"address", c.Services.PublicIP)
		}
		if err := pollFirst(hc, k.EnsureService); err != nil {
			return fmt.Errorf("creating the kubernetes service: %w", err)
		}
		ctrl.Store(k)
		go k.Run(hc)
		return nil
	})
	s.AddPreShutdownHook("stop-kubernetes-service-controller", func(hc server.HookContext) error {
		k := ctrl.Load()
		if k == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(hc, 2*endpointInterval)
		defer cancel()
		return k.Stop(ctx)
	})
}

// waitFor waits until ch is closed or ctx ends; a nil ch is no wait.
func waitFor(ctx context.Context, ch <-chan struct{}) error {
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pollFirst retries fn until it succeeds, ctx ends or firstSyncTimeout
// passes, and returns fn's last error on failure. The first retries come
// quickly, 10 ms apart and doubling to 100 ms: a first attempt fails when a
// write it needs from another hook lands a moment later, and /readyz waits
// for this hook.
func pollFirst(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, firstSyncTimeout)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		last := fn(ctx)
		if last == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return last
		case <-t.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// every calls fn every interval, the first time after one, until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// runDefaultServiceCIDR creates the ServiceCIDR "kubernetes" from
// --service-cluster-ip-range and marks it Ready, then keeps it so.
func (c Config) runDefaultServiceCIDR(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	var cidrs []string
	for _, r := range c.Services.ClusterIPRanges {
		cidrs = append(cidrs, r.String())
	}
	sync := func(ctx context.Context) error { return c.syncDefaultServiceCIDR(ctx, client, cidrs) }
	if err := pollFirst(hc, sync); err != nil {
		return fmt.Errorf("creating the default ServiceCIDR: %w", err)
	}
	go every(hc, serviceCIDRSyncInterval, func(ctx context.Context) {
		if err := sync(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Warn("syncing the default ServiceCIDR", "err", err)
		}
	})
	return nil
}

func (c Config) syncDefaultServiceCIDR(ctx context.Context, client kubernetes.Interface, cidrs []string) error {
	api := client.NetworkingV1().ServiceCIDRs()
	cidr, err := api.Get(ctx, clusterip.DefaultServiceCIDRName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cidr, err = api.Create(ctx, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: clusterip.DefaultServiceCIDRName},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: cidrs},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	switch {
	case cidr.DeletionTimestamp != nil:
		return nil
	case len(cidrs) == 2 && len(cidr.Spec.CIDRs) == 1 && cidr.Spec.CIDRs[0] == cidrs[0]:
		cidr.Spec.CIDRs = cidrs
		_, err = api.Update(ctx, cidr, metav1.UpdateOptions{})
		return err
	case !slices.Equal(cidr.Spec.CIDRs, cidrs):
		c.Logger.Warn("the default ServiceCIDR does not match --service-cluster-ip-range", "stored", cidr.Spec.CIDRs, "flag", cidrs)
		return nil
	}
	for _, cond := range cidr.Status.Conditions {
		if cond.Type == networkingv1.ServiceCIDRConditionReady && cond.Status != metav1.ConditionUnknown {
			return nil
		}
	}
	cidr.Status.Conditions = append(cidr.Status.Conditions, metav1.Condition{
		Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: metav1.Now(),
	})
	_, err = api.UpdateStatus(ctx, cidr, metav1.UpdateOptions{})
	return err
}

// runServiceRepairs repairs cluster IPs and node ports once the default
// ServiceCIDR exists, then every RepairInterval. Node ports cannot be
// allocated before the first repair has written their bitmap.
func (c Config) runServiceRepairs(hc server.HookContext, b *servicesBuilt) error {
	ipRepair := &clusterip.Repair{IPs: b.ips, Services: b.services, Allocator: b.ipAlloc,
		Logger: c.Logger.With("controller", "ipallocator-repair"), Now: time.Now}
	portRepair := &nodeport.Repair{Allocator: b.ports, Services: b.services, Logger: c.Logger.With("controller", "portallocator-repair")}
	repair := func(ctx context.Context) error {
		if _, err := b.cidrs.Get(ctx, clusterip.DefaultServiceCIDRName, &metav1.GetOptions{}); err != nil {
			return err
		}
		return errors.Join(ipRepair.RunOnce(ctx), portRepair.RunOnce(ctx))
	}
	if err := pollFirst(hc, repair); err != nil {
		return fmt.Errorf("unable to perform initial IP and Port allocation check: %w", err)
	}
	interval := c.Services.RepairInterval
	if interval <= 0 {
		interval = defaultRepairInterval
	}
	go every(hc, interval, func(ctx context.Context) {
		if err := repair(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Warn("repairing service allocations", "err", err)
		}
	})
	return nil
}
