package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// allocateUpdate adjusts an updated service's IP family fields and
// allocations: cluster IPs on a change from or to ExternalName or between
// single and dual stack, node ports on type and port changes.
func (al *ServiceAllocators) allocateUpdate(ctx context.Context, svc, old *corev1.Service, dryRun bool) (*allocTxn, error) {
	if err := al.initIPFamilyFields(svc, old); err != nil {
		return nil, err
	}
	t := &allocTxn{}
	allocated, released, err := al.updateClusterIPs(ctx, svc, old, dryRun)
	t.onRevert(func() { al.releaseIPs(ctx, allocated, dryRun) })
	if err != nil {
		t.revert()
		return nil, err
	}
	t.onCommit(func() { al.releaseIPs(ctx, released, dryRun) })
	op := newPortOp(ctx, al.Ports, dryRun)
	t.add(op)
	if err := updateNodePortsOf(ctx, svc, old, op); err != nil {
		t.revert()
		return nil, err
	}
	return t, nil
}

// updateClusterIPs allocates and lists for release what a change of type
// or of stack needs. Releases wait for the update to succeed.
func (al *ServiceAllocators) updateClusterIPs(ctx context.Context, svc, old *corev1.Service, dryRun bool) (allocated, release map[corev1.IPFamily]string, err error) {
	if matchingPreferDualStack(svc, old) {
		return nil, nil, nil
	}
	wasExternal, isExternal := old.Spec.Type == corev1.ServiceTypeExternalName, svc.Spec.Type == corev1.ServiceTypeExternalName
	switch {
	case wasExternal && !isExternal:
		allocated, err = al.allocClusterIPs(ctx, svc, dryRun)
		return allocated, nil, err
	case isHeadless(old):
		return nil, nil, nil
	case !wasExternal && isExternal:
		release = map[corev1.IPFamily]string{}
		for i, f := range old.Spec.IPFamilies {
			if i < len(old.Spec.ClusterIPs) {
				release[f] = old.Spec.ClusterIPs[i]
			}
		}
		return nil, release, nil
	case len(old.Spec.IPFamilies) == 1 && len(svc.Spec.IPFamilies) == 2:
		if len(svc.Spec.ClusterIPs) < 2 {
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "")
		}
		second := svc.Spec.IPFamilies[1]
		allocated, err = al.allocIPs(ctx, svc, map[corev1.IPFamily]string{second: svc.Spec.ClusterIPs[1]}, dryRun)
		if err == nil {
			svc.Spec.ClusterIPs[1] = allocated[second]
		}
		return allocated, nil, err
	case len(old.Spec.IPFamilies) == 2 && len(svc.Spec.IPFamilies) == 1 && len(old.Spec.ClusterIPs) > 1:
		return nil, map[corev1.IPFamily]string{old.Spec.IPFamilies[1]: old.Spec.ClusterIPs[1]}, nil
	}
	return nil, nil, nil
}

// updateNodePortsOf releases the node ports of a service that no longer
// has any, allocates new ones, and handles the health check node port.
func updateNodePortsOf(ctx context.Context, svc, old *corev1.Service, op *portOp) error {
	oldHas := needsNodePortType(old)
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName, corev1.ServiceTypeClusterIP:
		if oldHas {
			for _, p := range nodePortsOf(old) {
				op.releaseDeferred(p)
			}
		}
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		if err := updateNodePorts(ctx, svc, old, op); err != nil {
			return err
		}
	}
	needed, needs := needsHealthCheck(old), needsHealthCheck(svc)
	switch {
	case !needed && needs:
		if err := allocHealthCheckNodePort(ctx, svc, op); err != nil {
			return err
		}
	case needed && !needs:
		op.releaseDeferred(int(old.Spec.HealthCheckNodePort))
	}
	return nil
}

// updateNodePorts allocates the node ports the new service asks for or
// needs and were not the old one's, and releases the old ones it dropped.
func updateNodePorts(ctx context.Context, svc, old *corev1.Service, op *portOp) error {
	oldPorts := nodePortsOf(old)
	type key struct {
		proto corev1.Protocol
		port  int32
	}
	seen := map[key]bool{}
	taken := map[int]bool{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		if sp.NodePort != 0 {
			n := int(sp.NodePort)
			if !containsInt(oldPorts, n) && !taken[n] {
				if err := op.allocate(ctx, n); err != nil {
					return nodePortInvalid(svc, i, sp.NodePort, err)
				}
				taken[n] = true
			}
		} else {
			n, err := op.allocateNext(ctx)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
			}
			sp.NodePort = int32(n)
		}
		k := key{sp.Protocol, sp.NodePort}
		if seen[k] {
			return fmt.Errorf("duplicate nodePort: %v", k)
		}
		seen[k] = true
	}
	newPorts := nodePortsOf(svc)
	for _, p := range oldPorts {
		if !containsInt(newPorts, p) {
			op.releaseDeferred(p)
		}
	}
	return nil
}

// initNodePorts allocates the node ports of a new service: the requested
// ones, or one per distinct service port, shared by the protocols of a
// port number.
func initNodePorts(ctx context.Context, svc *corev1.Service, op *portOp) error {
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		got := byPort[sp.Port]
		switch {
		case got == 0:
			n := requestedNodePort(sp.Port, svc.Spec.Ports)
			if n != 0 {
				if err := op.allocate(ctx, int(n)); err != nil {
					return nodePortInvalid(svc, i, n, err)
				}
			} else {
				next, err := op.allocateNext(ctx)
				if err != nil {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
				}
				n = int32(next)
			}
			sp.NodePort, byPort[sp.Port] = n, n
		case sp.NodePort == 0:
			sp.NodePort = got
		case sp.NodePort != got:
			if err := op.allocate(ctx, int(sp.NodePort)); err != nil {
				return nodePortInvalid(svc, i, sp.NodePort, err)
			}
		}
	}
	return nil
}

func nodePortInvalid(svc *corev1.Service, i int, port int32, err error) error {
	return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), port, err.Error())})
}

// requestedNodePort is the node port a service port with this number asks
// for, if any does.
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

// allocHealthCheckNodePort reserves the requested health check node port,
// or a free one.
func allocHealthCheckNodePort(ctx context.Context, svc *corev1.Service, op *portOp) error {
	if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
		if err := op.allocate(ctx, int(hc)); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", hc, err))
		}
		return nil
	}
	n, err := op.allocateNext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", n, err))
	}
	svc.Spec.HealthCheckNodePort = int32(n)
	return nil
}

func shouldAllocateNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// nodePortsOf lists a service's node ports, repeats included.
func nodePortsOf(svc *corev1.Service) []int {
	var out []int
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out = append(out, int(p.NodePort))
		}
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
