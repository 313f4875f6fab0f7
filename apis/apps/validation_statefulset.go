package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

// StatefulSetOptions are the variations of stateful set validation between
// create and update.
type StatefulSetOptions struct {
	// AllowInvalidServiceName skips the DNS label check of serviceName.
	AllowInvalidServiceName bool
	// SkipPodTemplate skips the pod template validation, for updates of
	// stateful sets whose old spec is invalid by today's rules.
	SkipPodTemplate bool
	// SkipClaimTemplates skips the validation of volumeClaimTemplates.
	SkipClaimTemplates bool
	// AllowRecreate accepts the Recreate update strategy.
	AllowRecreate bool
}

// ValidateStatefulSetSpec validates the spec of a stateful set.
func ValidateStatefulSetSpec(spec *appsv1.StatefulSetSpec, fldPath *field.Path, opts StatefulSetOptions) field.ErrorList {
	errs := validatePodManagementPolicy(spec.PodManagementPolicy, fldPath.Child("podManagementPolicy"))
	errs = append(errs, validateStatefulSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"), opts.AllowRecreate)...)
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		policyPath := fldPath.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, validateRetentionPolicyType(p.WhenDeleted, policyPath.Child("whenDeleted"))...)
		errs = append(errs, validateRetentionPolicyType(p.WhenScaled, policyPath.Child("whenScaled"))...)
	}
	if !opts.SkipClaimTemplates {
		for i := range spec.VolumeClaimTemplates {
			errs = append(errs, validateClaimSpec(&spec.VolumeClaimTemplates[i].Spec, fldPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	errs = append(errs, nonNegative(deref32(spec.Replicas), fldPath.Child("replicas"))...)
	errs = append(errs, nonNegative(spec.MinReadySeconds, fldPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		errs = append(errs, nonNegative(spec.Ordinals.Start, fldPath.Child("ordinals", "start"))...)
	}
	if !opts.AllowInvalidServiceName && spec.ServiceName != "" {
		for _, msg := range validation.IsDNS1123Label(spec.ServiceName) {
			errs = append(errs, field.Invalid(fldPath.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	errs = append(errs, strictSelector(spec.Selector, "statefulset", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		errs = append(errs, field.Invalid(fldPath.Child("selector"), spec.Selector, ""))
	} else {
		errs = append(errs, statefulSetTemplate(spec, selector, fldPath.Child("template"), opts.SkipPodTemplate)...)
	}
	return append(errs, alwaysRestartingTemplate(&spec.Template.Spec, "StatefulSet", fldPath.Child("template", "spec"))...)
}

func validatePodManagementPolicy(p appsv1.PodManagementPolicyType, fldPath *field.Path) field.ErrorList {
	switch p {
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, p, fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement))}
}

func validateStatefulSetUpdateStrategy(s *appsv1.StatefulSetUpdateStrategy, fldPath *field.Path, allowRecreate bool) field.ErrorList {
	onlyForRolling := fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)
	switch {
	case s.Type == "":
		return field.ErrorList{field.Required(fldPath, "")}
	case s.Type == appsv1.OnDeleteStatefulSetStrategyType,
		s.Type == appsv1.RecreateStatefulSetStrategyType && allowRecreate:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(fldPath.Child("rollingUpdate"), internalRollingUpdateOf(s.RollingUpdate), onlyForRolling)}
		}
	case s.Type == appsv1.RollingUpdateStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return validateRollingUpdateStatefulSet(s.RollingUpdate, fldPath.Child("rollingUpdate"))
		}
	default:
		msg := fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)
		if allowRecreate {
			msg = fmt.Sprintf("must be '%s', '%s', or '%s'", appsv1.RollingUpdateStatefulSetStrategyType,
				appsv1.OnDeleteStatefulSetStrategyType, appsv1.RecreateStatefulSetStrategyType)
		}
		return field.ErrorList{field.Invalid(fldPath, internalStatefulSetStrategy(s), msg)}
	}
	return nil
}

func validateRollingUpdateStatefulSet(ru *appsv1.RollingUpdateStatefulSetStrategy, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(deref32(ru.Partition), fldPath.Child("partition"))
	if ru.MaxUnavailable != nil {
		maxPath := fldPath.Child("maxUnavailable")
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, maxPath)...)
		if intOrPercentValue(*ru.MaxUnavailable) == 0 {
			errs = append(errs, field.Invalid(maxPath, *ru.MaxUnavailable, "cannot be 0"))
		}
		errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, maxPath)...)
	}
	return errs
}

func validateRetentionPolicyType(p appsv1.PersistentVolumeClaimRetentionPolicyType, fldPath *field.Path) field.ErrorList {
	switch p {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	valid := []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}
	return field.ErrorList{field.NotSupported(fldPath, p, valid)}
}

// statefulSetTemplate validates the pod template as the stateful set
// controller will use it: hostname and subdomain are overwritten by the
// controller, and each claim template becomes a volume of the same name.
func statefulSetTemplate(spec *appsv1.StatefulSetSpec, selector labels.Selector, fldPath *field.Path, skipPod bool) field.ErrorList {
	t := &spec.Template
	errs := selectorMatchesTemplate(selector, t, fldPath)
	if !skipPod {
		errs = append(errs, core.ValidatePodTemplateSpec(podTemplateForStatefulSet(spec), fldPath)...)
	}
	// kube checks the template metadata here a second time.
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, fldPath.Child("labels"))...)
	return append(errs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
}

// podTemplateForStatefulSet is the template of spec with the fields the
// controller sets cleared and the claim template volumes added.
func podTemplateForStatefulSet(spec *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	t := &spec.Template
	if t.Spec.Hostname == "" && t.Spec.Subdomain == "" && len(spec.VolumeClaimTemplates) == 0 {
		return t
	}
	t = t.DeepCopy()
	t.Spec.Hostname, t.Spec.Subdomain = "", ""
	if len(spec.VolumeClaimTemplates) == 0 {
		return t
	}
	claims := make(map[string]bool, len(spec.VolumeClaimTemplates))
	volumes := make([]corev1.Volume, 0, len(spec.VolumeClaimTemplates)+len(t.Spec.Volumes))
	for _, c := range spec.VolumeClaimTemplates {
		if claims[c.Name] {
			continue
		}
		claims[c.Name] = true
		volumes = append(volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name},
		}})
	}
	for _, v := range t.Spec.Volumes {
		if !claims[v.Name] {
			volumes = append(volumes, v)
		}
	}
	t.Spec.Volumes = volumes
	return t
}

// ValidateStatefulSetUpdate validates an updated stateful set: the rules of
// the spec, and selector, volumeClaimTemplates, serviceName and
// podManagementPolicy immutable. The pod template is not validated when the
// old spec fails today's rules, so that such objects can still be updated.
func ValidateStatefulSetUpdate(ss, old *appsv1.StatefulSet, opts StatefulSetOptions) field.ErrorList {
	if len(ValidateStatefulSetSpec(&old.Spec, field.NewPath("spec"), opts)) > 0 {
		opts.SkipPodTemplate = true
	}
	specPath := field.NewPath("spec")
	errs := ValidateStatefulSetSpec(&ss.Spec, specPath, opts)
	errs = append(errs, apivalidation.ValidateImmutableField(ss.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(ss.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates, specPath.Child("volumeClaimTemplates"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(ss.Spec.ServiceName, old.Spec.ServiceName, specPath.Child("serviceName"))...)
	return append(errs, apivalidation.ValidateImmutableField(ss.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, specPath.Child("podManagementPolicy"))...)
}

// ValidateStatefulSetStatusUpdate validates the status of an updated
// stateful set; collisionCount may not decrease.
func ValidateStatefulSetStatusUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	fldPath := field.NewPath("status")
	errs := ValidateStatefulSetStatus(&ss.Status, fldPath)
	return append(errs, notDecremented(ss.Status.CollisionCount, old.Status.CollisionCount, fldPath.Child("collisionCount"))...)
}

// ValidateStatefulSetStatus validates the counters of a stateful set status.
func ValidateStatefulSetStatus(s *appsv1.StatefulSetStatus, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(s.Replicas, fldPath.Child("replicas"))
	errs = append(errs, nonNegative(s.ReadyReplicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(s.CurrentReplicas, fldPath.Child("currentReplicas"))...)
	errs = append(errs, nonNegative(s.UpdatedReplicas, fldPath.Child("updatedReplicas"))...)
	errs = append(errs, nonNegative(s.AvailableReplicas, fldPath.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	errs = append(errs, nonNegativePtr(s.CollisionCount, fldPath.Child("collisionCount"))...)
	errs = append(errs, atMostReplicas(s.ReadyReplicas, s.Replicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, atMostReplicas(s.CurrentReplicas, s.Replicas, fldPath.Child("currentReplicas"))...)
	errs = append(errs, atMostReplicas(s.UpdatedReplicas, s.Replicas, fldPath.Child("updatedReplicas"))...)
	errs = append(errs, atMostReplicas(s.AvailableReplicas, s.Replicas, fldPath.Child("availableReplicas"))...)
	return append(errs, availableAtMostReady(s.AvailableReplicas, s.ReadyReplicas, fldPath.Child("availableReplicas"), "cannot be greater than status.readyReplicas")...)
}
