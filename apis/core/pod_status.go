package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodQOSClass returns the QoS class of a pod: the one recorded in its
// status, else the one its resources give. Pod-level resources, when they
// set cpu, memory or hugepages, decide alone; otherwise a pod is
// BestEffort when no container asks for cpu or memory, Guaranteed when
// every container's cpu and memory requests equal their limits, and
// Burstable in between.
func PodQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	if r := pod.Spec.Resources; r != nil && podLevelResourcesSet(r) {
		return requirementsQOS(r)
	}
	var qos corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := requirementsQOS(&list[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

func podLevelResourcesSet(r *corev1.ResourceRequirements) bool {
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name := range list {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name) {
				return true
			}
		}
	}
	return false
}

// requirementsQOS is the class of one set of requirements, from its cpu and
// memory.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if qos != "" && qos != c {
			return corev1.PodQOSBurstable
		}
		qos = c
	}
	return qos
}

// setPodCondition sets a condition of a pod's status as kube's helpers do:
// the transition time changes only with the status.
func setPodCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range s.Conditions {
		if s.Conditions[i].Type != c.Type {
			continue
		}
		if s.Conditions[i].Status == c.Status {
			c.LastTransitionTime = s.Conditions[i].LastTransitionTime
		}
		s.Conditions[i] = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

// podCondition returns the condition of the given type, or nil.
func podCondition(s *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// applyAffinityLabelKeys turns the matchLabelKeys and mismatchLabelKeys of
// pod (anti-)affinity terms into requirements on the pod's own label
// values, as kube does on create.
func applyAffinityLabelKeys(pod *corev1.Pod) {
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	var terms []*corev1.PodAffinityTerm
	collect := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i := range preferred {
			terms = append(terms, &preferred[i].PodAffinityTerm)
		}
		for i := range required {
			terms = append(terms, &required[i])
		}
	}
	if a.PodAffinity != nil {
		collect(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a.PodAntiAffinity != nil {
		collect(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	for _, t := range terms {
		if t.LabelSelector == nil || (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) {
			continue
		}
		addLabelRequirements(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		addLabelRequirements(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, pod.Labels)
	}
}

// applyTopologySpreadLabelKeys does the same for the matchLabelKeys of
// topology spread constraints.
func applyTopologySpreadLabelKeys(pod *corev1.Pod) {
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector != nil && len(c.MatchLabelKeys) > 0 {
			addLabelRequirements(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		}
	}
}

func addLabelRequirements(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, labels map[string]string) {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
		}
	}
}
