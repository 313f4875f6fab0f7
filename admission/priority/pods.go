package priority

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/capstan-io/capstan/admission"
)

var _ admission.Mutator = (*Plugin)(nil)

// Admit gives a new pod the priority and preemption policy of its priority
// class, or of the global default class, or 0 and PreemptLowerPriority when
// there is none; an update keeps the values the pod was created with.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	if a.Operation == admission.Update {
		old, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
		}
		if pod.Spec.Priority == nil {
			pod.Spec.Priority = old.Spec.Priority
		}
		if pod.Spec.PreemptionPolicy == nil {
			pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
		}
		return nil
	}
	name, priority, policy, err := p.establish(ctx, a, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pod.Spec.PreemptionPolicy = policy
	}
	return nil
}

// establish resolves a pod's class name (empty: the global default) to the
// class's name, value and preemption policy.
func (p *Plugin) establish(ctx context.Context, a *admission.Attributes, className string) (string, int32, *corev1.PreemptionPolicy, error) {
	if className == "" {
		def, err := p.defaultClass(ctx)
		if err != nil {
			return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("error occurred while retrieving default priority class: %w", err))
		}
		if def == nil {
			lower := corev1.PreemptLowerPriority
			return "", 0, &lower, nil
		}
		return def.Name, def.Value, def.PreemptionPolicy, nil
	}
	classes, err := p.list(ctx)
	if err != nil {
		return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("failed to resolve PriorityClass with name %s: %w", className, err))
	}
	for _, c := range classes {
		if c.Name == className {
			return c.Name, c.Value, c.PreemptionPolicy, nil
		}
	}
	return "", 0, nil, forbidden(a, fmt.Errorf("no PriorityClass with name %v was found", className))
}

// forbidden is admission's 403, naming the object as the write does, or by
// its generateName before a name is generated, or "Unknown".
func forbidden(a *admission.Attributes, err error) error {
	name := a.Name
	if name == "" {
		name = "Unknown"
		if m, merr := meta.Accessor(a.Object); merr == nil {
			if m.GetName() != "" {
				name = m.GetName()
			} else if m.GetGenerateName() != "" {
				name = m.GetGenerateName()
			}
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}
