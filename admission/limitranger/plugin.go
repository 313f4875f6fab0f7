// Package limitranger is kube's LimitRanger admission plugin: a new or
// resized pod's containers get the default requests and limits of the
// namespace's LimitRanges (noted in the kubernetes.io/limit-ranger
// annotation), and pods and claims outside a range's min, max or
// limit/request ratio are refused.
package limitranger

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/capstan-io/capstan/admission"
)

// Lister lists a namespace's LimitRanges.
type Lister func(ctx context.Context, namespace string) ([]corev1.LimitRange, error)

// Plugin is the LimitRanger plugin.
type Plugin struct{ list Lister }

// New returns the plugin reading ranges with list.
func New(list Lister) *Plugin { return &Plugin{list: list} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// supports reports whether the plugin looks at a, as kube's: pods when
// created or resized (pods/resize), claims when created or updated.
func supports(a *admission.Attributes) bool {
	pod := a.Kind.Group == "" && a.Kind.Kind == "Pod"
	switch {
	case a.Subresource == "resize" && pod && a.Operation == admission.Update:
		return true
	case a.Subresource != "", pod && a.Operation == admission.Update:
		return false
	}
	return pod || a.Kind.Group == "" && a.Kind.Kind == "PersistentVolumeClaim"
}

// ranges are the namespace's ranges when the write is one the plugin
// looks at: not one of an object being deleted.
func (p *Plugin) ranges(ctx context.Context, a *admission.Attributes) ([]corev1.LimitRange, error) {
	if !supports(a) {
		return nil, nil
	}
	if a.OldObject != nil {
		old, err := meta.Accessor(a.OldObject)
		if err != nil {
			return nil, admission.NewForbidden(a, err)
		}
		if old.GetDeletionTimestamp() != nil {
			return nil, nil
		}
	}
	lrs, err := p.list(ctx, a.Namespace)
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	return lrs, nil
}

// Admit gives a pod's containers the ranges' defaults.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	lrs, err := p.ranges(ctx, a)
	if err != nil || len(lrs) == 0 {
		return err
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || a.Resource.Resource != "pods" {
		return nil
	}
	for i := range lrs {
		setDefaults(pod, &lrs[i])
	}
	return nil
}

// setDefaults applies one range's container defaults.
func setDefaults(pod *corev1.Pod, lr *corev1.LimitRange) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, l := range lr.Spec.Limits {
		if l.Type == corev1.LimitTypeContainer {
			for k, v := range l.DefaultRequest {
				requests[k] = v.DeepCopy()
			}
			for k, v := range l.Default {
				limits[k] = v.DeepCopy()
			}
		}
	}
	var notes []string
	merge := func(c *corev1.Container, kind string) {
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		var setReq, setLim []string
		for k, v := range limits {
			if _, ok := c.Resources.Limits[k]; !ok {
				c.Resources.Limits[k] = v.DeepCopy()
				setLim = append(setLim, string(k))
			}
		}
		for k, v := range requests {
			if _, ok := c.Resources.Requests[k]; !ok {
				c.Resources.Requests[k] = v.DeepCopy()
				setReq = append(setReq, string(k))
			}
		}
		if len(setReq) > 0 {
			slices.Sort(setReq)
			notes = append(notes, strings.Join(setReq, ", ")+fmt.Sprintf(" request for %s %s", kind, c.Name))
		}
		if len(setLim) > 0 {
			slices.Sort(setLim)
			notes = append(notes, strings.Join(setLim, ", ")+fmt.Sprintf(" limit for %s %s", kind, c.Name))
		}
	}
	for i := range pod.Spec.Containers {
		merge(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		merge(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// Validate refuses pods and claims outside the ranges.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	lrs, err := p.ranges(ctx, a)
	if err != nil || len(lrs) == 0 {
		return err
	}
	for i := range lrs {
		var errs []error
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			if a.Resource.Resource == "pods" {
				errs = validatePod(&lrs[i], obj)
			}
		case *corev1.PersistentVolumeClaim:
			if a.Resource.Resource == "persistentvolumeclaims" {
				errs = validateClaim(&lrs[i], obj)
			}
		}
		if len(errs) > 0 {
			return admission.NewForbidden(a, utilerrors.NewAggregate(errs))
		}
	}
	return nil
}

func validateClaim(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) []error {
	var errs []error
	for _, l := range lr.Spec.Limits {
		if l.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for k, v := range l.Min {
			errs = appendErr(errs, minConstraint(string(l.Type), k, v, pvc.Spec.Resources.Requests, corev1.ResourceList{}))
		}
		for k, v := range l.Max {
			errs = appendErr(errs, maxRequestConstraint(string(l.Type), k, v, pvc.Spec.Resources.Requests))
		}
	}
	return errs
}

func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) []error {
	var errs []error
	check := func(l corev1.LimitRangeItem, requests, limits corev1.ResourceList) {
		for k, v := range l.Min {
			errs = appendErr(errs, minConstraint(string(l.Type), k, v, requests, limits))
		}
		for k, v := range l.Max {
			errs = appendErr(errs, maxConstraint(string(l.Type), k, v, requests, limits))
		}
		for k, v := range l.MaxLimitRequestRatio {
			errs = appendErr(errs, ratioConstraint(string(l.Type), k, v, requests, limits))
		}
	}
	for _, l := range lr.Spec.Limits {
		switch l.Type {
		case corev1.LimitTypeContainer:
			for _, c := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
				check(l, c.Resources.Requests, c.Resources.Limits)
			}
		case corev1.LimitTypePod:
			requests, limits := podTotals(pod)
			check(l, requests, limits)
		}
	}
	return errs
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

// podTotals are a pod's requests and limits as kube's LimitRanger sums
// them (no overhead): containers and sidecars summed, each other init
// container with the sidecars started before it at most, and pod-level
// cpu and memory, when set, in place of the sums.
func podTotals(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	requests = podTotal(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
	limits = podTotal(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
	return requests, limits
}

func podTotal(pod *corev1.Pod, of func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		addTo(total, of(c.Resources))
	}
	sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		use := corev1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(total, of(c.Resources))
			addTo(sidecars, of(c.Resources))
			use = sidecars
		} else {
			addTo(use, of(c.Resources))
			addTo(use, sidecars)
		}
		maxTo(inits, use)
	}
	maxTo(total, inits)
	if pod.Spec.Resources != nil {
		for name, q := range of(*pod.Spec.Resources) {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				total[name] = q.DeepCopy()
			}
		}
	}
	return total
}

func addTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		q, ok := dst[k]
		if !ok {
			dst[k] = v.DeepCopy()
			continue
		}
		q.Add(v)
		dst[k] = q
	}
}

func maxTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; !ok || v.Cmp(q) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
