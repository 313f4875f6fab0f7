package core

import (
	"fmt"

	"github.com/capstan-io/capstan/apis/internaldiff"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ValidatePodStatusUpdate validates an update through pods/status:
// conditions, the nominated node, an immutable QoS class and the pod and
// host IPs. Container state transitions are not checked.
func ValidatePodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validatePodAnnotationUpdates(pod, old, field.NewPath("metadata", "annotations"))
	errs = append(errs, validatePodAnnotations(pod.Annotations, &pod.Spec, field.NewPath("metadata", "annotations"))...)
	statusPath := field.NewPath("status")
	errs = append(errs, validatePodConditions(pod.Status.Conditions, statusPath.Child("conditions"))...)
	if pod.Spec.NodeName != old.Spec.NodeName {
		errs = append(errs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	nn := pod.Status.NominatedNodeName
	if nn != "" && nn != old.Status.NominatedNodeName {
		errs = append(errs, validateSubdomainName(nn, statusPath.Child("nominatedNodeName"))...)
		if old.Spec.NodeName != "" {
			errs = append(errs, field.Forbidden(statusPath.Child("nominatedNodeName"), "may not be set on pods that are already bound to a node"))
		}
	}
	if pod.Status.ObservedGeneration < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("observedGeneration"), pod.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pod.Status.QOSClass, old.Status.QOSClass, statusPath.Child("qosClass"))...)
	errs = append(errs, validatePodIPs(pod, old)...)
	return append(errs, validateHostIPs(pod, old)...)
}

// systemPodConditions are the condition types kube sets itself; others
// must be qualified names.
var systemPodConditions = map[corev1.PodConditionType]bool{corev1.PodScheduled: true, corev1.PodReady: true, corev1.PodInitialized: true}

func validatePodConditions(conditions []corev1.PodCondition, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range conditions {
		if c.ObservedGeneration < 0 {
			errs = append(errs, field.Invalid(fldPath.Index(i).Child("observedGeneration"), c.ObservedGeneration, "must be a non-negative integer"))
		}
		if !systemPodConditions[c.Type] {
			// kube spells this path in Go's case.
			errs = append(errs, validateQualifiedName(string(c.Type), fldPath.Index(i).Child("Type"))...)
		}
	}
	return errs
}

// validatePodIPs checks status.podIPs: valid IPs (old ones may stay), one
// per family, and podIP equal to the first.
func validatePodIPs(pod, old *corev1.Pod) field.ErrorList {
	path := field.NewPath("status", "podIPs")
	ips := make([]string, len(pod.Status.PodIPs))
	for i, ip := range pod.Status.PodIPs {
		ips[i] = ip.IP
	}
	var oldIPs []string
	for _, ip := range old.Status.PodIPs {
		oldIPs = append(oldIPs, ip.IP)
	}
	errs := validateIPList(ips, oldIPs, path, pod.Status.PodIPs)
	switch {
	case (pod.Status.PodIP != "") != (len(ips) > 0):
		errs = append(errs, field.Invalid(path, pod.Status.PodIPs, "podIP and podIPs must either both be set or both be unset"))
	case len(ips) > 0 && pod.Status.PodIP != ips[0]:
		errs = append(errs, field.Invalid(path.Index(0).Child("ip"), ips[0], "must be equal to `podIP`"))
	}
	return errs
}

// validateHostIPs checks status.hostIPs like podIPs, hostIP first.
func validateHostIPs(pod, old *corev1.Pod) field.ErrorList {
	if len(pod.Status.HostIPs) == 0 {
		return nil
	}
	path := field.NewPath("status", "hostIPs")
	var errs field.ErrorList
	if pod.Status.HostIP != pod.Status.HostIPs[0].IP {
		errs = append(errs, field.Invalid(path.Index(0).Child("ip"), pod.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
	}
	ips := make([]string, len(pod.Status.HostIPs))
	for i, ip := range pod.Status.HostIPs {
		ips[i] = ip.IP
	}
	var oldIPs []string
	for _, ip := range old.Status.HostIPs {
		oldIPs = append(oldIPs, ip.IP)
	}
	return append(errs, validateIPList(ips, oldIPs, path, pod.Status.HostIPs)...)
}

// validateIPList checks each IP (strictly, but keeping invalid old ones)
// and that a list of several is a dual-stack pair.
func validateIPList(ips, oldIPs []string, path *field.Path, value any) field.ErrorList {
	var errs field.ErrorList
	for i, ip := range ips {
		errs = append(errs, validation.IsValidIPForLegacyField(path.Index(i), ip, true, oldIPs)...)
	}
	if len(ips) > 1 {
		dual, err := netutils.IsDualStackIPStrings(ips)
		if err != nil {
			errs = append(errs, field.InternalError(path, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dual || len(ips) > 2 {
			errs = append(errs, field.Invalid(path, value, "may specify no more than one IP for each IP family"))
		}
	}
	return errs
}

// ValidatePodEphemeralContainersUpdate validates an update through
// pods/ephemeralcontainers: the pod as a whole, and that ephemeral
// containers are only added, never changed or removed.
func ValidatePodEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validatePodMetaAndSpec(pod)
	errs = append(errs, validatePodAnnotationUpdates(pod, old, field.NewPath("metadata", "annotations"))...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	path := field.NewPath("spec", "ephemeralContainers")
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !equality.Semantic.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, internaldiff.Diff(o, *n))))
		}
	}
	return errs
}
