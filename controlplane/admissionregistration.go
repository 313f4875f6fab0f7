package controlplane

import (
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/admissionregistration"
)

// priorityAdmissionregistration orders admissionregistration.k8s.io in
// /apis, as kube.
const priorityAdmissionregistration = 16700

// apiExtensions is the category kube gives the group's resources.
var apiExtensions = []string{"api-extensions"}

// admissionregistrationGroup is admissionregistration.k8s.io/v1: webhook
// configurations, and validating and mutating admission policies with
// their bindings. kube 1.37 serves all six at v1 by default (v1beta1 and
// v1alpha1 are off by default), and so does capstan, at v1 only.
func (f *storeBuilder) admissionregistrationGroup() (builtGroup, error) {
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
			strategy: admissionregistration.ValidatingAdmissionPolicyStrategy,
			status:   admissionregistration.NewValidatingAdmissionPolicyStatusStrategy(),
			new:      func() runtime.Object { return &arv1.ValidatingAdmissionPolicy{} },
			newList:  func() runtime.Object { return &arv1.ValidatingAdmissionPolicyList{} }},
		{name: "validatingadmissionpolicybindings", kind: "ValidatingAdmissionPolicyBinding", categories: apiExtensions,
			strategy: admissionregistration.ValidatingAdmissionPolicyBindingStrategy,
			new:      func() runtime.Object { return &arv1.ValidatingAdmissionPolicyBinding{} },
			newList:  func() runtime.Object { return &arv1.ValidatingAdmissionPolicyBindingList{} }},
		{name: "mutatingadmissionpolicies", kind: "MutatingAdmissionPolicy", categories: apiExtensions,
			strategy: admissionregistration.MutatingAdmissionPolicyStrategy,
			new:      func() runtime.Object { return &arv1.MutatingAdmissionPolicy{} },
			newList:  func() runtime.Object { return &arv1.MutatingAdmissionPolicyList{} }},
		{name: "mutatingadmissionpolicybindings", kind: "MutatingAdmissionPolicyBinding", categories: apiExtensions,
			strategy: admissionregistration.MutatingAdmissionPolicyBindingStrategy,
			new:      func() runtime.Object { return &arv1.MutatingAdmissionPolicyBinding{} },
			newList:  func() runtime.Object { return &arv1.MutatingAdmissionPolicyBindingList{} }},
	}
	bg, err := f.buildGroup(arv1.GroupName, priorityAdmissionregistration, arv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	statusKeepsMetadata(&bg)
	return bg, nil
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
