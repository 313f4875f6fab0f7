// Package discovery holds the strategy of discovery.k8s.io/v1
// EndpointSlices.
package discovery

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// The managers whose slices hold addresses they checked themselves: kube
// does not warn about them.
var checkedManagers = []string{"endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"}

// EndpointSliceStrategy is the strategy of the endpointslices resource.
type EndpointSliceStrategy struct{}

var (
	_ registry.Strategy         = EndpointSliceStrategy{}
	_ registry.Defaulter        = EndpointSliceStrategy{}
	_ registry.WarningsOnCreate = EndpointSliceStrategy{}
	_ registry.WarningsOnUpdate = EndpointSliceStrategy{}
)

// NamespaceScoped is true.
func (EndpointSliceStrategy) NamespaceScoped() bool { return true }

// Default gives ports an empty name and the TCP protocol.
func (EndpointSliceStrategy) Default(obj runtime.Object) {
	ports := obj.(*discoveryv1.EndpointSlice).Ports
	for i := range ports {
		if ports[i].Name == nil {
			ports[i].Name = new(string)
		}
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}

// PrepareForCreate starts the generation at 1 and drops the deprecated
// topology, which discovery.k8s.io/v1 does not take.
func (EndpointSliceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	eps := obj.(*discoveryv1.EndpointSlice)
	eps.Generation = 1
	dropTopology(nil, eps)
}

// PrepareForUpdate bumps the generation when anything but the metadata
// changed, or the labels did, and drops the deprecated topology of changed
// endpoints.
func (EndpointSliceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	eps, oldEPS := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	a, b := *eps, *oldEPS
	a.TypeMeta, b.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
	a.ObjectMeta, b.ObjectMeta = metav1.ObjectMeta{}, metav1.ObjectMeta{}
	if !apiequality.Semantic.DeepEqual(a, b) || !apiequality.Semantic.DeepEqual(eps.Labels, oldEPS.Labels) {
		eps.Generation = oldEPS.Generation + 1
	}
	dropTopology(oldEPS, eps)
}

// dropTopology clears the deprecated topology of changed endpoints; a
// hostname label naming a node old already named becomes the nodeName.
func dropTopology(old, eps *discoveryv1.EndpointSlice) {
	if old != nil && apiequality.Semantic.DeepEqual(old.Endpoints, eps.Endpoints) {
		return
	}
	known := map[string]bool{}
	if old != nil {
		for _, ep := range old.Endpoints {
			if n := ep.DeprecatedTopology[corev1.LabelHostname]; n != "" {
				known[n] = true
			}
		}
	}
	for i := range eps.Endpoints {
		ep := &eps.Endpoints[i]
		n, ok := ep.DeprecatedTopology[corev1.LabelHostname]
		if ep.NodeName == nil && ok && known[n] && len(apivalidation.NameIsDNSSubdomain(n, false)) == 0 {
			ep.NodeName = &n
		}
		ep.DeprecatedTopology = nil
	}
}

// Validate validates a new slice.
func (EndpointSliceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateEndpointSlice(obj.(*discoveryv1.EndpointSlice), nil)
}

// ValidateUpdate validates an update; the address type is immutable.
func (EndpointSliceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	eps, oldEPS := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	errs := ValidateEndpointSlice(eps, oldEPS)
	return append(errs, apivalidation.ValidateImmutableField(eps.AddressType, oldEPS.AddressType, field.NewPath("addressType"))...)
}

// WarningsOnCreate warns about FQDN slices and ambiguous IPs.
func (EndpointSliceStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	eps := obj.(*discoveryv1.EndpointSlice)
	var warnings []string
	if eps.AddressType == discoveryv1.AddressTypeFQDN {
		warnings = append(warnings, fmt.Sprintf("%s: FQDN endpoints are deprecated", field.NewPath("spec", "addressType")))
	}
	return append(warnings, ipWarnings(eps)...)
}

// WarningsOnUpdate warns about ambiguous IPs.
func (EndpointSliceStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return ipWarnings(obj.(*discoveryv1.EndpointSlice))
}

func ipWarnings(eps *discoveryv1.EndpointSlice) []string {
	manager := eps.Labels[discoveryv1.LabelManagedBy]
	for _, m := range checkedManagers {
		if manager == m {
			return nil
		}
	}
	var warnings []string
	for i, ep := range eps.Endpoints {
		for j, addr := range ep.Addresses {
			warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), addr)...)
		}
	}
	return warnings
}
