package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// ResourceQuotaStrategy is the strategy of the resourcequotas resource.
type ResourceQuotaStrategy struct{}

var (
	_ registry.Strategy         = ResourceQuotaStrategy{}
	_ registry.Defaulter        = ResourceQuotaStrategy{}
	_ registry.WarningsOnCreate = ResourceQuotaStrategy{}
)

// NamespaceScoped is true.
func (ResourceQuotaStrategy) NamespaceScoped() bool { return true }

// Default rounds every quantity up to milli precision, as kube does.
func (ResourceQuotaStrategy) Default(obj runtime.Object) {
	q := obj.(*corev1.ResourceQuota)
	roundResourceList(q.Spec.Hard)
	roundResourceList(q.Status.Hard)
	roundResourceList(q.Status.Used)
}

// PrepareForCreate clears the status, which the quota controller fills.
func (ResourceQuotaStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

// PrepareForUpdate keeps the status, which changes through
// resourcequotas/status.
func (ResourceQuotaStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = old.(*corev1.ResourceQuota).Status
}

// Validate validates a new quota.
func (ResourceQuotaStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	errs := ValidateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))
	return append(errs, validateQuotaStatus(&q.Status)...)
}

// ValidateUpdate validates an update: scopes are immutable.
func (ResourceQuotaStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateResourceQuotaUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}

// quotaWarnedResources are the resources whose request quota should not
// exceed their limit quota.
var quotaWarnedResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage}

// WarningsOnCreate warns of a request quota above the matching limit quota.
func (ResourceQuotaStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	hard := obj.(*corev1.ResourceQuota).Spec.Hard
	var out []string
	for _, name := range quotaWarnedResources {
		reqName := "requests." + name
		req, hasReq := hard[reqName]
		if !hasReq && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			if req, hasReq = hard[name]; hasReq {
				reqName = name
			}
		}
		limName := "limits." + name
		if lim, ok := hard[limName]; hasReq && ok && req.Cmp(lim) > 0 {
			out = append(out, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)", reqName, req.String(), limName, lim.String()))
		}
	}
	return out
}

// ResourceQuotaStatusStrategy is the strategy of resourcequotas/status: an
// update changes the status only.
type ResourceQuotaStatusStrategy struct{ ResourceQuotaStrategy }

// PrepareForUpdate keeps the spec of old.
func (ResourceQuotaStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ResourceQuota).Spec = old.(*corev1.ResourceQuota).Spec
}

// ValidateUpdate validates the new status.
func (ResourceQuotaStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateQuotaStatus(&obj.(*corev1.ResourceQuota).Status)
}
