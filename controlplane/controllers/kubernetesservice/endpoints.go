package kubernetesservice

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	netutils "k8s.io/utils/net"
)

// syncEndpoints writes the kubernetes Endpoints (and EndpointSlice) with
// the addresses of the live leases. While running it refuses to write an
// empty list; a server stopping may, being the last one.
func (c *Controller) syncEndpoints(ctx context.Context, stopping bool) error {
	client := c.Client.CoreV1().Endpoints(metav1.NamespaceDefault)
	ep, err := client.Get(ctx, Name, metav1.GetOptions{})
	create := apierrors.IsNotFound(err)
	switch {
	case create && stopping:
		return nil
	case create:
		ep = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: metav1.NamespaceDefault}}
	case err != nil:
		return err
	}
	ips, err := c.liveAddresses(ctx)
	if err != nil {
		return err
	}
	if len(ips) == 0 && !stopping {
		return fmt.Errorf("no API server IP addresses were listed in storage, refusing to erase all endpoints for the kubernetes Service")
	}
	slices.Sort(ips)
	want := c.endpointsSubsets(ips)
	labelled := ep.Labels[discoveryv1.LabelSkipMirror] == "true"
	if !create && labelled && equality.Semantic.DeepEqual(ep.Subsets, want) {
		return c.ensureSlice(ctx, ep)
	}
	if ep.Labels == nil {
		ep.Labels = map[string]string{}
	}
	// The slice is written here, not mirrored by a controller.
	ep.Labels[discoveryv1.LabelSkipMirror] = "true"
	ep.Subsets = want
	if create {
		ep, err = client.Create(ctx, ep, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
	} else {
		ep, err = client.Update(ctx, ep, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	return c.ensureSlice(ctx, ep)
}

func (c *Controller) endpointsSubsets(ips []string) []corev1.EndpointSubset {
	if len(ips) == 0 {
		return nil
	}
	addrs := make([]corev1.EndpointAddress, len(ips))
	for i, ip := range ips {
		addrs[i] = corev1.EndpointAddress{IP: ip}
	}
	return []corev1.EndpointSubset{{Addresses: addrs, Ports: c.endpointPorts()}}
}

// ensureSlice writes the EndpointSlice matching ep. Without the
// discovery.k8s.io group served there is none to write.
func (c *Controller) ensureSlice(ctx context.Context, ep *corev1.Endpoints) error {
	slices := c.Client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	want := sliceOf(ep)
	cur, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = slices.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return nil
		}
		return err
	case err != nil:
		return err
	case cur.AddressType != want.AddressType:
		if err := slices.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err = slices.Create(ctx, want, metav1.CreateOptions{})
		return err
	case equality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(cur.Ports, want.Ports) &&
		equality.Semantic.DeepEqual(cur.Labels, want.Labels):
		return nil
	}
	want.ResourceVersion = cur.ResourceVersion
	_, err = slices.Update(ctx, want, metav1.UpdateOptions{})
	return err
}

// sliceOf is the EndpointSlice of the first subset of ep, as kube makes it.
func sliceOf(ep *corev1.Endpoints) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: ep.Name, Namespace: ep.Namespace, Labels: map[string]string{discoveryv1.LabelServiceName: ep.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(ep.Subsets) == 0 {
		return s
	}
	sub := ep.Subsets[0]
	for i := range sub.Ports {
		p := sub.Ports[i]
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Port: &p.Port, Name: &p.Name, Protocol: &p.Protocol})
	}
	if allIPv6(sub.Addresses) {
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	s.Endpoints = []discoveryv1.Endpoint{}
	v6 := s.AddressType == discoveryv1.AddressTypeIPv6
	for _, a := range sub.Addresses {
		if netutils.IsIPv6String(a.IP) == v6 {
			ready := true
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}, TargetRef: a.TargetRef, NodeName: a.NodeName})
		}
	}
	return s
}

func allIPv6(addrs []corev1.EndpointAddress) bool {
	if len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !netutils.IsIPv6String(a.IP) {
			return false
		}
	}
	return true
}
