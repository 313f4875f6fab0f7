package resourcequota

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/internal/qos"
)

// pods charge their count and their compute resources.
type pods struct{ generic }

var podResources = []corev1.ResourceName{
	corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
}

func (p pods) tracks(n corev1.ResourceName) bool {
	if p.generic.tracks(n) || slices.Contains(podResources, n) || strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
		return true
	}
	// requests.<extended resource>, requests.hugepages-*
	rest, ok := strings.CutPrefix(string(n), corev1.DefaultResourceRequestsPrefix)
	return ok && (strings.Contains(rest, "/") || strings.HasPrefix(rest, corev1.ResourceHugePagesPrefix))
}

// handles creates, resizes, and the updates that move a pod between the
// Terminating and NotTerminating scopes.
func (pods) handles(a *admission.Attributes) bool {
	switch a.Subresource {
	case "":
		if a.Operation == admission.Update {
			pod, ok1 := a.Object.(*corev1.Pod)
			old, ok2 := a.OldObject.(*corev1.Pod)
			return ok1 && ok2 && terminating(pod) != terminating(old)
		}
		return a.Operation == admission.Create
	case "resize":
		return a.Operation == admission.Update
	}
	return false
}

func terminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

func (p pods) usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	out, _ := p.generic.usage(obj)
	// A finished pod holds nothing but its count.
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return out, nil
	}
	requests, limits := podResourceLists(pod)
	for _, r := range []struct{ name, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			out[r.name], out[r.req] = q, q
		}
		if q, ok := limits[r.name]; ok {
			out[r.lim] = q
		}
	}
	for n, q := range requests {
		if strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
			out[n] = q
		}
		if strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) || strings.Contains(string(n), "/") {
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(n))] = q
		}
	}
	return out, nil
}

// podResourceLists are the pod's requests and limits as the scheduler
// counts them: the containers and sidecars summed, each other init
// container (with the sidecars started before it) at most, pod-level
// resources where set, plus the runtime's overhead.
func podResourceLists(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		requests, limits = add(requests, c.Resources.Requests), add(limits, c.Resources.Limits)
	}
	sidecarReq, sidecarLim := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			requests, limits = add(requests, c.Resources.Requests), add(limits, c.Resources.Limits)
			sidecarReq, sidecarLim = add(sidecarReq, c.Resources.Requests), add(sidecarLim, c.Resources.Limits)
			continue
		}
		maxInto(requests, add(sidecarReq, c.Resources.Requests))
		maxInto(limits, add(sidecarLim, c.Resources.Limits))
	}
	if r := pod.Spec.Resources; r != nil {
		for n, q := range r.Requests {
			requests[n] = q
		}
		for n, q := range r.Limits {
			limits[n] = q
		}
	}
	if pod.Spec.Overhead != nil {
		requests = add(requests, pod.Spec.Overhead)
		for n, q := range pod.Spec.Overhead {
			if l, ok := limits[n]; ok {
				l.Add(q)
				limits[n] = l
			}
		}
	}
	return requests, limits
}

func maxInto(dst, src corev1.ResourceList) {
	for n, q := range src {
		if cur, ok := dst[n]; !ok || q.Cmp(cur) > 0 {
			dst[n] = q
		}
	}
}

func (pods) matchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("unexpected object %T", obj)
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		return priorityClassMatches(pod, sel)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// bestEffort is the BestEffort QoS class: no container asks for or limits
// CPU or memory.
func bestEffort(pod *corev1.Pod) bool { return qos.BestEffort(pod) }

func priorityClassMatches(pod *corev1.Pod, sel corev1.ScopedResourceSelectorRequirement) (bool, error) {
	s, err := scopeSelector(sel)
	if err != nil {
		return false, err
	}
	set := labels.Set{}
	if pod.Spec.PriorityClassName != "" {
		set[string(corev1.ResourceQuotaScopePriorityClass)] = pod.Spec.PriorityClassName
	}
	return s.Matches(set), nil
}

// scopeSelector is a scope selector requirement as a label selector over
// the scope's name, as kube matches scopes with values.
func scopeSelector(sel corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch sel.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("failed to parse and convert selector: %q is not a valid scope selector operator", sel.Operator)
	}
	req, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return nil, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	return labels.NewSelector().Add(*req), nil
}

func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, cross)
}

// validationSet are the names a quota can only charge when every
// container says them.
var validationSet = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
}

// constraints refuses containers that do not say what a quota on
// required must charge, with kube's message.
func (pods) constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.Resources != nil && (len(pod.Spec.Resources.Requests) > 0 || len(pod.Spec.Resources.Limits) > 0) {
		return nil
	}
	missing := map[corev1.ResourceName][]string{}
	check := func(c corev1.Container) {
		for _, n := range required {
			if !slices.Contains(validationSet, n) {
				continue
			}
			var has bool
			switch {
			case strings.HasPrefix(string(n), "limits."):
				_, has = c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(string(n), "limits."))]
			case strings.HasPrefix(string(n), "requests."):
				_, has = c.Resources.Requests[corev1.ResourceName(strings.TrimPrefix(string(n), "requests."))]
			default:
				_, has = c.Resources.Requests[n]
			}
			if !has && !slices.Contains(missing[n], c.Name) {
				missing[n] = append(missing[n], c.Name)
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		check(c)
	}
	for _, c := range pod.Spec.InitContainers {
		check(c)
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, n := range names(listOf(missing)) {
		cs := slices.Clone(missing[n])
		slices.Sort(cs)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", n, strings.Join(cs, ",")))
	}
	return errors.New("must specify " + strings.Join(msgs, "; "))
}

func listOf(m map[corev1.ResourceName][]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n := range m {
		out[n] = one
	}
	return out
}
