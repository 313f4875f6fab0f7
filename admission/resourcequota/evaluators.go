package resourcequota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

// evaluator is what quota knows of one resource: the usage of an object,
// the quota names it charges, which scopes it matches.
type evaluator interface {
	// tracks reports whether the evaluator charges the quota name.
	tracks(name corev1.ResourceName) bool
	// usage is what obj consumes.
	usage(obj runtime.Object) (corev1.ResourceList, error)
	// matchesScope reports whether obj is in a quota's scope; objects of
	// resources without scopes are in none.
	matchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// constraints refuses an object missing what a quota on required
	// needs to charge it (a pod's container without limits, say).
	constraints(required []corev1.ResourceName, obj runtime.Object) error
	// handles reports whether the write may change what is charged: kube
	// charges creates of everything, and the updates that can change usage.
	handles(a *admission.Attributes) bool
}

// countName is kube's object count name of a resource: count/<resource> for
// the core group, count/<resource>.<group> otherwise.
func countName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCounts are the core resources also counted by their plain name.
var legacyCounts = map[string]corev1.ResourceName{
	"configmaps": corev1.ResourceConfigMaps, "secrets": corev1.ResourceSecrets,
	"replicationcontrollers": corev1.ResourceReplicationControllers, "resourcequotas": corev1.ResourceQuotas,
	"services": corev1.ResourceServices, "persistentvolumeclaims": corev1.ResourcePersistentVolumeClaims,
	"pods": corev1.ResourcePods,
}

// evaluatorFor returns the resource's evaluator.
func evaluatorFor(gr schema.GroupResource) evaluator {
	g := generic{count: countName(gr)}
	if gr.Group == "" {
		g.legacy = legacyCounts[gr.Resource]
		switch gr.Resource {
		case "pods":
			return pods{g}
		case "services":
			return services{g}
		case "persistentvolumeclaims":
			return claims{g}
		}
	}
	return g
}

// generic counts objects.
type generic struct {
	count, legacy corev1.ResourceName
}

func (g generic) tracks(n corev1.ResourceName) bool {
	return n == g.count || (g.legacy != "" && n == g.legacy)
}

func (g generic) usage(runtime.Object) (corev1.ResourceList, error) {
	out := corev1.ResourceList{g.count: one}
	if g.legacy != "" {
		out[g.legacy] = one
	}
	return out, nil
}

func (generic) matchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (generic) constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// handles creates: an update does not change a count.
func (generic) handles(a *admission.Attributes) bool {
	return a.Subresource == "" && a.Operation == admission.Create
}

// services count load balancers and node ports too.
type services struct{ generic }

// handles creates and updates: a service's type and ports change.
func (services) handles(a *admission.Attributes) bool {
	return a.Subresource == "" && (a.Operation == admission.Create || a.Operation == admission.Update)
}

func (s services) tracks(n corev1.ResourceName) bool {
	return s.generic.tracks(n) || n == corev1.ResourceServicesLoadBalancers || n == corev1.ResourceServicesNodePorts
}

func (s services) usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	out, _ := s.generic.usage(obj)
	ports := int64(0)
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		ports = int64(len(svc.Spec.Ports))
	case corev1.ServiceTypeLoadBalancer:
		out[corev1.ResourceServicesLoadBalancers] = one
		if svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts {
			ports = int64(len(svc.Spec.Ports))
		}
	}
	out[corev1.ResourceServicesNodePorts] = *resourceQuantity(ports)
	if _, ok := out[corev1.ResourceServicesLoadBalancers]; !ok {
		out[corev1.ResourceServicesLoadBalancers] = *resourceQuantity(0)
	}
	return out, nil
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
