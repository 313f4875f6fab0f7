package core

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/capstan-io/capstan/apis/internaldiff"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodTemplateSpec validates a pod template: its labels and
// annotations, its spec, and that it has no ephemeral containers.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	errs = append(errs, validatePodAnnotations(t.Annotations, &t.Spec, fldPath.Child("annotations"))...)
	specPath := fldPath.Child("spec")
	errs = append(errs, validatePodSpec(&t.Spec, nil, specPath)...)
	errs = append(errs, validateSeccompAnnotationsMatch(t.Annotations, &t.Spec, specPath)...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// ValidatePod validates a new pod, metadata excluded.
func ValidatePod(pod *corev1.Pod) field.ErrorList {
	errs := validatePodMetaAndSpec(pod)
	specPath := field.NewPath("spec")
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return append(errs, validateSeccompAnnotationsMatch(pod.Annotations, &pod.Spec, specPath)...)
}

// validatePodMetaAndSpec applies the rules of a pod that every write of one
// shares: those of its spec and those kube keeps for pods, not templates.
func validatePodMetaAndSpec(pod *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validatePodAnnotations(pod.Annotations, &pod.Spec, field.NewPath("metadata", "annotations"))
	errs = append(errs, validatePodSpecWith(&pod.Spec, &pod.ObjectMeta, specPath, podOptions{isPod: true})...)
	if pod.Spec.ServiceAccountName == "" {
		for i, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for j, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(specPath.Child("volumes").Index(i).Child("projected", "sources").Index(j).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(*g, specPath.Child("terminationGracePeriodSeconds"))...)
	}
	for i, c := range pod.Spec.Containers {
		errs = append(errs, validateImageWhitespace(c.Image, specPath.Child("containers").Index(i).Child("image"))...)
	}
	for i, c := range pod.Spec.InitContainers {
		errs = append(errs, validateImageWhitespace(c.Image, specPath.Child("initContainers").Index(i).Child("image"))...)
	}
	return errs
}

// validateSeccompAnnotationsMatch requires the legacy seccomp annotations,
// where both are given, to agree with the seccompProfile fields.
func validateSeccompAnnotationsMatch(annotations map[string]string, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if a, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
			errs = append(errs, seccompMismatch(a, sc.SeccompProfile, specPath.Child("securityContext", "seccompProfile"))...)
		}
	}
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return
		}
		if a, ok := annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
			errs = append(errs, seccompMismatch(a, c.SecurityContext.SeccompProfile, p.Child("securityContext", "seccompProfile"))...)
		}
	})
	return errs
}

func seccompMismatch(a string, sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	const typeMsg = "seccomp type in annotation and field must match"
	switch sp.Type {
	case corev1.SeccompProfileTypeUnconfined:
		if a != corev1.SeccompProfileNameUnconfined {
			return field.ErrorList{field.Forbidden(fldPath.Child("type"), typeMsg)}
		}
	case corev1.SeccompProfileTypeRuntimeDefault:
		if a != corev1.SeccompProfileRuntimeDefault && a != corev1.DeprecatedSeccompProfileDockerDefault {
			return field.ErrorList{field.Forbidden(fldPath.Child("type"), typeMsg)}
		}
	case corev1.SeccompProfileTypeLocalhost:
		if !strings.HasPrefix(a, corev1.SeccompLocalhostProfileNamePrefix) {
			return field.ErrorList{field.Forbidden(fldPath.Child("type"), typeMsg)}
		}
		if sp.LocalhostProfile == nil || strings.TrimPrefix(a, corev1.SeccompLocalhostProfileNamePrefix) != *sp.LocalhostProfile {
			return field.ErrorList{field.Forbidden(fldPath.Child("localhostProfile"), "seccomp profile in annotation and field must match")}
		}
	}
	return nil
}

// updatablePodSpecFields is the list kube's refusal of a pod update quotes.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// ValidatePodUpdate validates an update of a pod: the new pod, and that its
// spec changed only where kube allows it.
func ValidatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validatePodMetaAndSpec(pod)
	errs = append(errs, validatePodAnnotationUpdates(pod, old, field.NewPath("metadata", "annotations"))...)
	specPath := field.NewPath("spec")
	for _, list := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(list.new) != len(list.old) {
			return append(errs, field.Forbidden(specPath.Child(list.name), "pod updates may not add or remove containers"))
		}
		// kube checks images again here, reporting their errors twice.
		for i, c := range list.new {
			if c.Image == "" {
				errs = append(errs, field.Required(specPath.Child(list.name).Index(i).Child("image"), ""))
			}
			errs = append(errs, validateImageWhitespace(c.Image, specPath.Child(list.name).Index(i).Child("image"))...)
		}
	}
	if ads, stop := validateActiveDeadlineUpdate(pod.Spec.ActiveDeadlineSeconds, old.Spec.ActiveDeadlineSeconds, specPath.Child("activeDeadlineSeconds")); len(ads) > 0 {
		errs = append(errs, ads...)
		if stop {
			return errs
		}
	}
	errs = append(errs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)
	if equality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return errs
	}
	munged := mungePodSpec(&pod.Spec, &old.Spec)
	if len(old.Spec.SchedulingGates) > 0 {
		errs = append(errs, validateGatedPodSchedulingUpdate(munged, &old.Spec, specPath)...)
	}
	if !equality.Semantic.DeepEqual(*munged, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), internaldiff.Diff(old.Spec, *munged))))
	}
	return errs
}

// validateActiveDeadlineUpdate allows setting activeDeadlineSeconds and
// lowering it, never raising or removing it. stop is set when kube stops
// validating there.
func validateActiveDeadlineUpdate(d, old *int64, fldPath *field.Path) (field.ErrorList, bool) {
	switch {
	case d == nil && old != nil:
		return field.ErrorList{field.Invalid(fldPath, d, "must not update from a positive integer to nil value")}, false
	case d == nil:
		return nil, false
	case *d < 0 || *d > math.MaxInt32:
		return field.ErrorList{field.Invalid(fldPath, *d, validation.InclusiveRangeError(0, math.MaxInt32))}, true
	case old != nil && *old < *d:
		return field.ErrorList{field.Invalid(fldPath, *d, "must be less than or equal to previous value")}, true
	}
	return nil, false
}

// mungePodSpec returns the new spec with what may change carried over from
// old, so that what remains different may not change.
func mungePodSpec(spec, old *corev1.PodSpec) *corev1.PodSpec {
	m := spec.DeepCopy()
	for i := range m.Containers {
		m.Containers[i].Image = old.Containers[i].Image
	}
	for i := range m.InitContainers {
		m.InitContainers[i].Image = old.InitContainers[i].Image
	}
	m.ActiveDeadlineSeconds = nil
	if old.ActiveDeadlineSeconds != nil {
		v := *old.ActiveDeadlineSeconds
		m.ActiveDeadlineSeconds = &v
	}
	m.SchedulingGates = old.SchedulingGates
	m.Tolerations = old.Tolerations
	if g := old.TerminationGracePeriodSeconds; g != nil && *g < 0 && m.TerminationGracePeriodSeconds != nil && *m.TerminationGracePeriodSeconds == 1 {
		m.TerminationGracePeriodSeconds = g
	}
	return m
}

// validateGatedPodSchedulingUpdate lets a pod still held by scheduling
// gates gain node selector entries; it carries them over into munged.
// Node affinity changes of gated pods are not supported: they remain
// refused as spec changes.
func validateGatedPodSchedulingUpdate(munged, old *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	if equality.Semantic.DeepEqual(munged.NodeSelector, old.NodeSelector) {
		return nil
	}
	var errs field.ErrorList
	for k, v := range old.NodeSelector {
		if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
			errs = append(errs, field.Invalid(specPath.Child("nodeSelector"), munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
			break
		}
	}
	munged.NodeSelector = old.NodeSelector
	return errs
}

// validateOnlyAddedTolerations allows adding tolerations and changing the
// tolerationSeconds of existing ones.
func validateOnlyAddedTolerations(tolerations, old []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range tolerations {
			o.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(tolerations, fldPath)
}

// validateOnlyDeletedSchedulingGates refuses new scheduling gates.
func validateOnlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	added := map[string]int{}
	for i, g := range gates {
		added[g.Name] = i
	}
	for _, g := range old {
		delete(added, g.Name)
	}
	var errs field.ErrorList
	for name, i := range added {
		errs = append(errs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", name)))
	}
	return errs
}

// validatePodAnnotationUpdates forbids adding, changing or removing the
// mirror pod and the deprecated AppArmor annotations.
func validatePodAnnotationUpdates(pod, old *corev1.Pod, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	guarded := func(k string) string {
		switch {
		case strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix):
			return "AppArmor annotations"
		case k == corev1.MirrorPodAnnotationKey:
			return "mirror pod annotation"
		}
		return ""
	}
	for k, ov := range old.Annotations {
		if nv, ok := pod.Annotations[k]; (!ok || nv != ov) && guarded(k) != "" {
			errs = append(errs, field.Forbidden(fldPath.Key(k), "may not remove or update "+guarded(k)))
		}
	}
	for k := range pod.Annotations {
		if _, ok := old.Annotations[k]; !ok && guarded(k) != "" {
			errs = append(errs, field.Forbidden(fldPath.Key(k), "may not add "+guarded(k)))
		}
	}
	return errs
}
