// Package apiregistration holds the strategies of apiregistration.k8s.io/v1
// apiservices and their status subresource, kube's validation of them, and
// the condition helpers the aggregator reads and writes them with. The
// types are kube-aggregator's types package.
package apiregistration

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/registry"
)

// Strategy is the strategy of the apiservices resource.
type Strategy struct{}

var (
	_ registry.Strategy             = Strategy{}
	_ registry.Defaulter            = Strategy{}
	_ registry.NameValidator        = Strategy{}
	_ registry.UnconditionalUpdater = Strategy{}
)

// NamespaceScoped is false.
func (Strategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube.
func (Strategy) AllowUnconditionalUpdate() bool { return false }

// Default gives a Service reference port 443.
func (Strategy) Default(obj runtime.Object) {
	apiregv1.SetObjectDefaults_APIService(obj.(*apiregv1.APIService))
}

// ValidateName allows any path segment: the name is version.group, and
// the core group's is "v1." (checked against the spec in Validate).
func (Strategy) ValidateName(name string, _ bool) []string {
	return content.IsPathSegmentName(name)
}

// PrepareForCreate clears the status; a Local APIService is Available at
// once.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	svc := obj.(*apiregv1.APIService)
	svc.Status = apiregv1.APIServiceStatus{}
	if svc.Spec.Service == nil {
		SetCondition(svc, LocalAvailable())
	}
}

// PrepareForUpdate keeps the status.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*apiregv1.APIService).Status = old.(*apiregv1.APIService).Status
}

// Validate validates a new APIService.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateAPIService(obj.(*apiregv1.APIService))
}

// ValidateUpdate validates an update as a new APIService.
func (Strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateAPIService(obj.(*apiregv1.APIService))
}

// StatusStrategy is the strategy of apiservices/status: an update changes
// the status only.
type StatusStrategy struct{ Strategy }

// PrepareForUpdate keeps the spec and the metadata a status update may not
// change.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svc, oldSvc := obj.(*apiregv1.APIService), old.(*apiregv1.APIService)
	svc.Spec = oldSvc.Spec
	svc.Labels, svc.Annotations = oldSvc.Labels, oldSvc.Annotations
	svc.Finalizers, svc.OwnerReferences = oldSvc.Finalizers, oldSvc.OwnerReferences
}

// ValidateUpdate validates the conditions' statuses.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status", "conditions")
	for i, c := range obj.(*apiregv1.APIService).Status.Conditions {
		switch c.Status {
		case apiregv1.ConditionTrue, apiregv1.ConditionFalse, apiregv1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(path.Index(i).Child("status"), c.Status,
				[]string{string(apiregv1.ConditionTrue), string(apiregv1.ConditionFalse), string(apiregv1.ConditionUnknown)}))
		}
	}
	return errs
}

// ValidateAPIService is kube's validation of an APIService's name and spec.
func ValidateAPIService(svc *apiregv1.APIService) field.ErrorList {
	var errs field.ErrorList
	spec, path := &svc.Spec, field.NewPath("spec")
	// A missing name is the metadata's error alone, as in kube.
	if required := spec.Version + "." + spec.Group; svc.Name != "" && svc.Name != required && len(content.IsPathSegmentName(svc.Name)) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), svc.Name, fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)))
	}
	if spec.Group == "" && spec.Version != "v1" {
		errs = append(errs, field.Required(path.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if spec.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(spec.Group) {
			errs = append(errs, field.Invalid(path.Child("group"), spec.Group, msg))
		}
	}
	for _, msg := range validation.IsDNS1035Label(spec.Version) {
		errs = append(errs, field.Invalid(path.Child("version"), spec.Version, msg))
	}
	if spec.GroupPriorityMinimum <= 0 || spec.GroupPriorityMinimum > 20000 {
		errs = append(errs, field.Invalid(path.Child("groupPriorityMinimum"), spec.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if spec.VersionPriority <= 0 || spec.VersionPriority > 1000 {
		errs = append(errs, field.Invalid(path.Child("versionPriority"), spec.VersionPriority, "must be positive and less than 1000"))
	}
	if spec.Service == nil {
		if len(spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(path.Child("caBundle"), fmt.Sprintf("%d bytes", len(spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(path.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	service := path.Child("service")
	if spec.Service.Namespace == "" {
		errs = append(errs, field.Required(service.Child("namespace"), ""))
	}
	if spec.Service.Name == "" {
		errs = append(errs, field.Required(service.Child("name"), ""))
	}
	port := int32(0)
	if spec.Service.Port != nil {
		port = *spec.Service.Port
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(service.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if spec.InsecureSkipTLSVerify && len(spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(path.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return errs
}

// LocalAvailable is the Available condition of a Local APIService.
func LocalAvailable() apiregv1.APIServiceCondition {
	return apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: apiregv1.ConditionTrue,
		LastTransitionTime: metav1.Now(), Reason: "Local", Message: "Local APIServices are always available"}
}

// Condition is svc's condition of type t, nil without one.
func Condition(svc *apiregv1.APIService, t apiregv1.APIServiceConditionType) *apiregv1.APIServiceCondition {
	for i := range svc.Status.Conditions {
		if svc.Status.Conditions[i].Type == t {
			return &svc.Status.Conditions[i]
		}
	}
	return nil
}

// IsAvailable reports whether svc's Available condition is True.
func IsAvailable(svc *apiregv1.APIService) bool {
	c := Condition(svc, apiregv1.Available)
	return c != nil && c.Status == apiregv1.ConditionTrue
}

// SetCondition sets c on svc, keeping the transition time when the status
// did not change.
func SetCondition(svc *apiregv1.APIService, c apiregv1.APIServiceCondition) {
	old := Condition(svc, c.Type)
	if old == nil {
		svc.Status.Conditions = append(svc.Status.Conditions, c)
		return
	}
	if old.Status != c.Status {
		old.Status, old.LastTransitionTime = c.Status, c.LastTransitionTime
	}
	old.Reason, old.Message = c.Reason, c.Message
}
