package controlplane

import (
	"context"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	arv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/admissionregistration"
	"github.com/capstan-io/capstan/endpoints/discovery"
)

// priorityAdmissionregistration orders admissionregistration.k8s.io in
// /apis, as kube.
const priorityAdmissionregistration = 16700

// apiExtensions is the category kube gives the group's resources.
var apiExtensions = []string{"api-extensions"}

// admissionregistrationGroup is admissionregistration.k8s.io/v1: webhook
// configurations, and validating and mutating admission policies with
// their bindings. kube 1.37 serves all six at v1 by default, and the
// mutating policies and bindings at v1beta1 too when --runtime-config
// turns it on (v1alpha1 capstan does not serve).
// Policies and bindings with params are checked by pa, which reads the
// policies a binding names from the stores built here.
func (f *storeBuilder) admissionregistrationGroup(pa *admissionregistration.ParamAccess) (builtGroup, error) {
	specs := []resourceSpec{
		{name: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", categories: apiExtensions,
			strategy: admissionregistration.ValidatingWebhookConfigurationStrategy,
			new:      func() runtime.Object { return &arv1.ValidatingWebhookConfiguration{} },
			newList:  func() runtime.Object { return &arv1.ValidatingWebhookConfigurationList{} }},
		{name: "mutatingwebhookconfigurations", kind: "MutatingWebhookConfiguration", categories: apiExtensions,
			strategy: admissionregistration.MutatingWebhookConfigurationStrategy,
			new:      func() runtime.Object { return &arv1.MutatingWebhookConfiguration{} },
			newList:  func() runtime.Object { return &arv1.MutatingWebhookConfigurationList{} }},
		{name: "validatingadmissionpolicies", kind: "ValidatingAdmissionPolicy", categories: apiExtensions,
			strategy: pa.ValidatingAdmissionPolicy(),
			status:   admissionregistration.NewValidatingAdmissionPolicyStatusStrategy(),
			new:      func() runtime.Object { return &arv1.ValidatingAdmissionPolicy{} },
			newList:  func() runtime.Object { return &arv1.ValidatingAdmissionPolicyList{} }},
		{name: "validatingadmissionpolicybindings", kind: "ValidatingAdmissionPolicyBinding", categories: apiExtensions,
			strategy: pa.ValidatingAdmissionPolicyBinding(),
			new:      func() runtime.Object { return &arv1.ValidatingAdmissionPolicyBinding{} },
			newList:  func() runtime.Object { return &arv1.ValidatingAdmissionPolicyBindingList{} }},
		{name: "mutatingadmissionpolicies", kind: "MutatingAdmissionPolicy", categories: apiExtensions,
			strategy: pa.MutatingAdmissionPolicy(),
			new:      func() runtime.Object { return &arv1.MutatingAdmissionPolicy{} },
			newList:  func() runtime.Object { return &arv1.MutatingAdmissionPolicyList{} }},
		{name: "mutatingadmissionpolicybindings", kind: "MutatingAdmissionPolicyBinding", categories: apiExtensions,
			strategy: pa.MutatingAdmissionPolicyBinding(),
			new:      func() runtime.Object { return &arv1.MutatingAdmissionPolicyBinding{} },
			newList:  func() runtime.Object { return &arv1.MutatingAdmissionPolicyBindingList{} }},
	}
	bg, err := f.buildGroup(arv1.GroupName, priorityAdmissionregistration, arv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	statusKeepsMetadata(&bg)
	if err := f.addBetas(&bg, arv1.SchemeGroupVersion, specs, betaGV{arv1beta1.SchemeGroupVersion, map[string]betaKind{
		"mutatingadmissionpolicies":       kindOf[arv1beta1.MutatingAdmissionPolicy, arv1beta1.MutatingAdmissionPolicyList](),
		"mutatingadmissionpolicybindings": kindOf[arv1beta1.MutatingAdmissionPolicyBinding, arv1beta1.MutatingAdmissionPolicyBindingList](),
	}}); err != nil {
		return bg, err
	}
	pa.ValidatingParamKind = func(ctx context.Context, name string) (*arv1.ParamKind, error) {
		obj, err := bg.stores["validatingadmissionpolicies"].Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*arv1.ValidatingAdmissionPolicy).Spec.ParamKind, nil
	}
	pa.MutatingParamKind = func(ctx context.Context, name string) (*arv1.ParamKind, error) {
		obj, err := bg.stores["mutatingadmissionpolicies"].Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*arv1.MutatingAdmissionPolicy).Spec.ParamKind, nil
	}
	return bg, nil
}

// discoveryResolver finds a kind's resource in discovery as kube's
// resolver of param kinds does: the first resource (not subresource) of
// the group version with that kind.
func discoveryResolver(reg *discovery.Registry) func(schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	return func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
		g, _ := reg.Group(gvk.Group)
		for _, v := range g.Versions {
			if v.Version != gvk.Version {
				continue
			}
			for _, r := range v.Resources {
				if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") && (r.Group == "" || r.Group == gvk.Group) &&
					(r.Version == "" || r.Version == gvk.Version) {
					return gvk.GroupVersion().WithResource(r.Name), nil
				}
			}
		}
		return schema.GroupVersionResource{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
}

// statusKeepsMetadata marks the status subresources of a group whose
// status strategies keep metadata too, so that managed fields of a status
// write do not claim any.
func statusKeepsMetadata(bg *builtGroup) {
	v := &bg.group.Versions[0]
	for i := range v.Resources {
		if strings.HasSuffix(v.Resources[i].Name, "/status") {
			v.Resources[i].ResetFields = []string{"spec", "metadata"}
		}
	}
}
