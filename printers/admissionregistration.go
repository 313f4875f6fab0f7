package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var admissionregistrationConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	admissionKind("ValidatingWebhookConfiguration"): New(webhookColumns, func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) (metav1.TableRow, error) {
		return rowOf(c.Name, int64(len(c.Webhooks)), since(c.CreationTimestamp, now))
	}),
	admissionKind("MutatingWebhookConfiguration"): New(webhookColumns, func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) (metav1.TableRow, error) {
		return rowOf(c.Name, int64(len(c.Webhooks)), since(c.CreationTimestamp, now))
	}),
	admissionKind("ValidatingAdmissionPolicy"): New(policyColumns("Validations", "Validations indicates the number of validation rules defined in this configuration"),
		func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) (metav1.TableRow, error) {
			return rowOf(p.Name, int64(len(p.Spec.Validations)), paramKind(p.Spec.ParamKind), since(p.CreationTimestamp, now))
		}),
	admissionKind("MutatingAdmissionPolicy"): New(policyColumns("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
		func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) (metav1.TableRow, error) {
			return rowOf(p.Name, int64(len(p.Spec.Mutations)), paramKind(p.Spec.ParamKind), since(p.CreationTimestamp, now))
		}),
	admissionKind("ValidatingAdmissionPolicyBinding"): New(policyBindingColumns,
		func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) (metav1.TableRow, error) {
			return rowOf(b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), since(b.CreationTimestamp, now))
		}),
	admissionKind("MutatingAdmissionPolicyBinding"): New(policyBindingColumns,
		func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) (metav1.TableRow, error) {
			return rowOf(b.Name, b.Spec.PolicyName, paramRef(b.Spec.ParamRef), since(b.CreationTimestamp, now))
		}),
}

func admissionKind(kind string) schema.GroupVersionKind {
	return admissionregistrationv1.SchemeGroupVersion.WithKind(kind)
}

var webhookColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
	ageColumn(),
}

func policyColumns(count, countDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		column(count, "integer", countDoc),
		column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
		ageColumn(),
	}
}

var policyBindingColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
	column("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
	ageColumn(),
}

func paramKind(k *admissionregistrationv1.ParamKind) string {
	if k == nil {
		return "<unset>"
	}
	return k.APIVersion + "/" + k.Kind
}

// paramRef is namespace/name, "*/name" when the namespace is not known, or
// the selector.
func paramRef(r *admissionregistrationv1.ParamRef) string {
	switch {
	case r == nil:
		return "<unset>"
	case r.Name != "" && r.Namespace != "":
		return r.Namespace + "/" + r.Name
	case r.Name != "":
		return "*/" + r.Name
	case r.Selector != nil:
		return r.Selector.String()
	}
	return "<unset>"
}
