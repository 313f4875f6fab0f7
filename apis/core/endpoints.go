package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// EndpointsStrategy is the strategy of the endpoints resource.
type EndpointsStrategy struct{}

var (
	_ registry.Strategy         = EndpointsStrategy{}
	_ registry.Defaulter        = EndpointsStrategy{}
	_ registry.CreateOnUpdater  = EndpointsStrategy{}
	_ registry.WarningsOnCreate = EndpointsStrategy{}
	_ registry.WarningsOnUpdate = EndpointsStrategy{}
)

// endpointsControllerLabel marks the endpoints the endpoints controller
// writes; they get no warnings.
const (
	endpointsManagedByLabel = "endpoints.kubernetes.io/managed-by"
	endpointsControllerName = "endpoint-controller"
)

// NamespaceScoped is true.
func (EndpointsStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true, as for services.
func (EndpointsStrategy) AllowCreateOnUpdate() bool { return true }

// Default makes ports TCP unless they say otherwise.
func (EndpointsStrategy) Default(obj runtime.Object) {
	ep := obj.(*corev1.Endpoints)
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// PrepareForCreate does nothing: endpoints have no status.
func (EndpointsStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: endpoints have no status.
func (EndpointsStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates new endpoints.
func (EndpointsStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateEndpointSubsets(obj.(*corev1.Endpoints).Subsets, field.NewPath("subsets"))
}

// ValidateUpdate validates updated endpoints; subsets an update leaves as
// they were are not validated again, as older servers may have accepted
// them.
func (EndpointsStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ep, oldEp := obj.(*corev1.Endpoints), old.(*corev1.Endpoints)
	errs := validateEndpointSubsets(ep.Subsets, field.NewPath("subsets"))
	if len(errs) > 0 && equality.Semantic.DeepEqual(ep.Subsets, oldEp.Subsets) {
		return nil
	}
	return errs
}

// WarningsOnCreate warns of non-canonical addresses.
func (EndpointsStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return endpointsWarnings(obj.(*corev1.Endpoints))
}

// WarningsOnUpdate warns of non-canonical addresses.
func (EndpointsStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return endpointsWarnings(obj.(*corev1.Endpoints))
}

func endpointsWarnings(ep *corev1.Endpoints) []string {
	if ep.Labels[endpointsManagedByLabel] == endpointsControllerName {
		return nil
	}
	var w []string
	for i, ss := range ep.Subsets {
		path := field.NewPath("subsets").Index(i)
		for j, a := range ss.Addresses {
			w = append(w, ipWarnings(path.Child("addresses").Index(j).Child("ip"), a.IP)...)
		}
		for j, a := range ss.NotReadyAddresses {
			w = append(w, ipWarnings(path.Child("notReadyAddresses").Index(j).Child("ip"), a.IP)...)
		}
	}
	return w
}

// validateEndpointSubsets checks each subset: some address, valid
// addresses, valid ports (named when there are several).
func validateEndpointSubsets(subsets []corev1.EndpointSubset, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range subsets {
		path := fldPath.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(path, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], path.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], path.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, path.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, path *field.Path) field.ErrorList {
	errs := validation.IsValidIPForLegacyField(path.Child("ip"), a.IP, true, nil)
	if a.Hostname != "" {
		errs = append(errs, validateDNSLabel(a.Hostname, path.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, validateDNSSubdomain(*a.NodeName, path.Child("nodeName"))...)
	}
	return append(errs, validateEndpointIP(a.IP, path.Child("ip"))...)
}

func validateEndpointPort(p *corev1.EndpointPort, requireName bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && p.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if p.Name != "" {
		errs = append(errs, validateDNSLabel(p.Name, path.Child("name"))...)
	}
	errs = append(errs, validatePortNum(int(p.Port), path.Child("port"))...)
	errs = append(errs, validateProtocol(p.Protocol, path.Child("protocol"))...)
	if p.AppProtocol != nil {
		errs = append(errs, validateQualifiedName(*p.AppProtocol, path.Child("appProtocol"))...)
	}
	return errs
}
