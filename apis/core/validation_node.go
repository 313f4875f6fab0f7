package core

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// declaredFeatureName is the form of a node's declared feature names:
// UpperCamelCase, then camel-case segments after slashes.
var declaredFeatureName = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*(\/[a-zA-Z][a-zA-Z0-9]*)*$`)

// ValidateNode validates a node: its annotations, taints, resources and pod
// CIDRs. Status fields are all optional but checked when set. As kube does,
// the errors of taints and of the swap status are reported under metadata.
func ValidateNode(n *corev1.Node) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := validateNodeAnnotations(n.Annotations, meta.Child("annotations"))
	errs = append(errs, validateNodeTaints(n.Spec.Taints, meta.Child("taints"))...)
	errs = append(errs, validateNodeResources(n)...)
	if swap := n.Status.NodeInfo.Swap; swap != nil && swap.Capacity != nil && *swap.Capacity <= 0 {
		errs = append(errs, field.Invalid(meta.Child("nodeSwapStatus", "capacity"), *swap.Capacity, "must be greater than zero"))
	}
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures, field.NewPath("status", "declaredFeatures"))...)
	return append(errs, validatePodCIDRs(n.Spec.PodCIDRs)...)
}

// ValidateNodeUpdate validates an update of a node's status; the main
// resource validates the new node in full as well.
func ValidateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := validateNodeAnnotations(n.Annotations, meta.Child("annotations"))
	errs = append(errs, validateNodeResources(n)...)
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures, field.NewPath("status", "declaredFeatures"))...)
	errs = append(errs, validateNodeTaints(n.Spec.Taints, meta.Child("taints"))...)
	return append(errs, validateNodeSpecUpdate(n, old)...)
}

// validateNodeSpecUpdate holds the rules only an update has: unique
// addresses, pod CIDRs and provider ID set once, external ID immutable.
func validateNodeSpecUpdate(n, old *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range n.Status.Addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	cidrPath := field.NewPath("spec", "podCIDRs")
	const cidrMsg = "node updates may not change podCIDR except from \"\" to valid"
	if len(old.Spec.PodCIDRs) > 0 {
		if len(old.Spec.PodCIDRs) != len(n.Spec.PodCIDRs) {
			errs = append(errs, field.Forbidden(cidrPath, cidrMsg))
		} else {
			for i, c := range old.Spec.PodCIDRs {
				if c != n.Spec.PodCIDRs[i] {
					errs = append(errs, field.Forbidden(cidrPath, cidrMsg))
				}
			}
		}
	}
	idPath := field.NewPath("spec", "providerID")
	switch {
	case old.Spec.ProviderID != "" && n.Spec.ProviderID == "":
		errs = append(errs, field.Invalid(idPath, nil, "field cannot be cleared once set"))
	case old.Spec.ProviderID != "" && old.Spec.ProviderID != n.Spec.ProviderID:
		errs = append(errs, field.Invalid(idPath, nil, "field cannot be modified once set"))
	}
	if n.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return errs
}

// validateNodeTaints checks keys, values and effects, and that taints are
// unique by key and effect.
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		path := fldPath.Index(i)
		errs = append(errs, metavalidation.ValidateLabelName(t.Key, path.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		if t.Effect == "" {
			errs = append(errs, field.Required(path.Child("effect"), ""))
		} else {
			errs = append(errs, validateTaintEffect(t.Effect, path.Child("effect"))...)
		}
		if seen[t.Effect].Has(t.Key) {
			dup := field.Duplicate(path, t)
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = sets.New[string]()
		}
		seen[t.Effect].Insert(t.Key)
	}
	return errs
}

// validateNodeAnnotations checks the legacy scheduling annotations: taints
// and pods to avoid, when set, must parse and be valid.
func validateNodeAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v := annotations[corev1.TaintsAnnotationKey]; v != "" {
		var taints []corev1.Taint
		if err := json.Unmarshal([]byte(v), &taints); err != nil {
			errs = append(errs, field.Invalid(fldPath, corev1.TaintsAnnotationKey, err.Error()))
		} else {
			errs = append(errs, validateNodeTaints(taints, fldPath.Child(corev1.TaintsAnnotationKey))...)
		}
	}
	if v := annotations[corev1.PreferAvoidPodsAnnotationKey]; v != "" {
		errs = append(errs, validateAvoidPods(v, fldPath)...)
	}
	return errs
}

func validateAvoidPods(v string, fldPath *field.Path) field.ErrorList {
	var avoid corev1.AvoidPods
	if err := json.Unmarshal([]byte(v), &avoid); err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("AvoidPods"), corev1.PreferAvoidPodsAnnotationKey, err.Error())}
	}
	var errs field.ErrorList
	for i, e := range avoid.PreferAvoidPods {
		path := fldPath.Child(corev1.PreferAvoidPodsAnnotationKey).Index(i).Child("PodSignature")
		ref := e.PodSignature.PodController
		switch {
		case ref == nil:
			errs = append(errs, field.Required(path, ""))
		case ref.Controller == nil || !*ref.Controller:
			errs = append(errs, field.Invalid(path.Child("PodController", "Controller"), false, "must point to a controller"))
		}
	}
	return errs
}

// validateNodeResources checks the quantities of capacity and allocatable.
func validateNodeResources(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for name, q := range n.Status.Capacity {
		errs = append(errs, validateResourceQuantityValue(name, q, field.NewPath("status", "capacity", string(name)))...)
	}
	for name, q := range n.Status.Allocatable {
		errs = append(errs, validateResourceQuantityValue(name, q, field.NewPath("status", "allocatable", string(name)))...)
	}
	return errs
}

// validateDeclaredFeatures requires well-formed names, sorted and unique.
func validateDeclaredFeatures(names []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, name := range names {
		switch {
		case len(name) > validation.DNS1123SubdomainMaxLength:
			errs = append(errs, field.Invalid(fldPath.Index(i), name, fmt.Sprintf("invalid feature name %q: must be no more than %d characters",
				name, validation.DNS1123SubdomainMaxLength)))
		case !declaredFeatureName.MatchString(name):
			errs = append(errs, field.Invalid(fldPath.Index(i), name, fmt.Sprintf("invalid feature name %q: must start with an UpperCamelCase segment, "+
				"with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes", name)))
		}
		if i+1 < len(names) {
			switch next := names[i+1]; {
			case name == next:
				errs = append(errs, field.Duplicate(fldPath.Index(i+1), next))
			case name > next:
				errs = append(errs, field.Invalid(fldPath.Index(i+1), next, "list must be sorted alphabetically"))
			}
		}
	}
	return errs
}

// validatePodCIDRs requires valid CIDRs, at most one of each IP family.
func validatePodCIDRs(cidrs []string) field.ErrorList {
	if len(cidrs) == 0 {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec", "podCIDRs")
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDRForLegacyField(path.Index(i), c, false, nil)...)
	}
	if len(cidrs) > 1 {
		dual, err := netutils.IsDualStackCIDRStrings(cidrs)
		if err != nil {
			errs = append(errs, field.InternalError(path, fmt.Errorf("invalid PodCIDRs. failed to check with dual stack with error:%v", err)))
		}
		if !dual || len(cidrs) > 2 {
			errs = append(errs, field.Invalid(path, cidrs, "may specify no more than one CIDR for each IP family"))
		}
	}
	return errs
}
