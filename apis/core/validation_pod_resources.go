package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResourceRequirements checks the names and quantities of limits
// and requests, that requests do not exceed limits (or equal them for
// resources that cannot be overcommitted), and the claims referenced.
func validateResourceRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList,
	claims sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	cpuOrMemory, hugePages := false, false
	for name, q := range r.Limits {
		path := limPath.Key(string(name))
		errs = append(errs, nameFn(name, path)...)
		errs = append(errs, validateResourceQuantity(name, q, path)...)
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
		hugePages = hugePages || isHugePages(name)
	}
	for name, q := range r.Requests {
		path := reqPath.Key(string(name))
		errs = append(errs, nameFn(name, path)...)
		errs = append(errs, validateResourceQuantity(name, q, path)...)
		if lim, ok := r.Limits[name]; ok {
			if q.Cmp(lim) != 0 && !overcommitAllowed(name) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
			} else if q.Cmp(lim) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
			}
		} else if !overcommitAllowed(name) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
		hugePages = hugePages || isHugePages(name)
	}
	if !cpuOrMemory && hugePages {
		errs = append(errs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return append(errs, validateResourceClaimRefs(r.Claims, claims, fldPath.Child("claims"))...)
}

// validateResourceQuantity refuses negative quantities, fractions of
// integer resources and hugepages that are not whole pages.
func validateResourceQuantity(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(fldPath, q.String(), "must be greater than or equal to 0"))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(fldPath, q, "must be an integer"))
	}
	if isHugePages(name) && !wholeHugePages(name, q) {
		errs = append(errs, field.Invalid(fldPath, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
	}
	return errs
}

func wholeHugePages(name corev1.ResourceName, q resource.Quantity) bool {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 {
		return false
	}
	return q.Value()%size.Value() == 0
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// isNativeResource: unprefixed names and those under kubernetes.io.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func overcommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

// isExtendedResource: a prefixed resource outside kubernetes.io whose quota
// name is a qualified name.
func isExtendedResource(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

var integerResources = sets.New[corev1.ResourceName](corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

func isIntegerResource(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResource(name)
}

// standardResources are the unprefixed resource names kube knows.
var standardResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceEphemeralStorage, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims, corev1.ResourceStorage, corev1.ResourceRequestsStorage,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

// validateResourceName: a qualified name, and a known one unless prefixed.
func validateResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	unprefixed := !strings.Contains(string(name), "/")
	hugePagesQuota := isHugePages(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
	if unprefixed && !standardResources.Has(name) && !hugePagesQuota {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a standard resource type or fully qualified")}
	}
	return nil
}

// validateContainerResourceName: cpu, memory, ephemeral-storage, hugepages
// or an extended resource.
func validateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	errs := validateResourceName(name, fldPath)
	switch {
	case !strings.Contains(string(name), "/"):
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage && !isHugePages(name) {
			return append(errs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
		}
	case !isNativeResource(name) && !isExtendedResource(name):
		return append(errs, field.Invalid(fldPath, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validatePodResourceName: the resources pod-level resources support.
func validatePodResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	if errs := validateResourceName(name, fldPath); len(errs) > 0 {
		return errs
	}
	if name != corev1.ResourceCPU && name != corev1.ResourceMemory && !isHugePages(name) {
		return field.ErrorList{field.NotSupported(fldPath, name, []string{"cpu", corev1.ResourceHugePagesPrefix, "memory"})}
	}
	return nil
}

// validatePodResources checks spec.resources, the pod-level resources (on
// by default since 1.34). That containers fit in them is not checked.
func validatePodResources(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.Resources == nil {
		return nil
	}
	path := fldPath.Child("resources")
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(path, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(path.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	return append(errs, validateResourceRequirements(spec.Resources, validatePodResourceName, podClaimNames(spec), path)...)
}

// podClaimNames returns the names of spec.resourceClaims.
func podClaimNames(spec *corev1.PodSpec) sets.Set[string] {
	names := sets.New[string]()
	for _, c := range spec.ResourceClaims {
		if c.Name != "" {
			names.Insert(c.Name)
		}
	}
	return names
}

// validatePodResourceClaims checks spec.resourceClaims: unique DNS label
// names, each naming a claim or a claim template. Static pods have none.
func validatePodResourceClaims(podMeta *metav1.ObjectMeta, claims []corev1.PodResourceClaim, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range claims {
		if podMeta != nil {
			if _, ok := podMeta.Annotations[corev1.MirrorPodAnnotationKey]; ok {
				return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support resource claims")}
			}
		}
		path := fldPath.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		default:
			errs = append(errs, validateDNSLabel(c.Name, path.Child("name"))...)
			names.Insert(c.Name)
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			errs = append(errs, field.Invalid(path, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			errs = append(errs, field.Invalid(path, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if c.ResourceClaimName != nil {
			errs = append(errs, validateSubdomainName(*c.ResourceClaimName, path.Child("resourceClaimName"))...)
		}
		if c.ResourceClaimTemplateName != nil {
			errs = append(errs, validateSubdomainName(*c.ResourceClaimTemplateName, path.Child("resourceClaimTemplateName"))...)
		}
	}
	return errs
}

// validateResourceClaimRefs checks a container's resources.claims: each
// names one of the pod's claims, once.
func validateResourceClaimRefs(refs []corev1.ResourceClaim, claims sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, ref := range refs {
		path := fldPath.Index(i)
		if ref.Name == "" {
			errs = append(errs, field.Required(path, ""))
			continue
		}
		if seen.Has(ref.Name) {
			// Every request of the claim is already referenced.
			errs = append(errs, field.Duplicate(path, ref.Name))
		} else {
			errs = append(errs, claimRefOverlaps(ref, seen, path)...)
		}
		if !claims.Has(ref.Name) {
			e := field.NotFound(path, ref.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if claims.Len() == 0 {
				e.Detail += " which is empty"
			} else {
				e.Detail += ": " + strings.Join(sets.List(claims), ", ")
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// claimRefOverlaps checks a reference to a claim not referenced as a whole
// yet, and records it.
func claimRefOverlaps(ref corev1.ResourceClaim, seen sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	key := ref.Name
	if ref.Request != "" {
		errs = append(errs, validateDNSLabel(ref.Request, path.Child("request"))...)
		key += "/" + ref.Request
	}
	switch {
	case seen.Has(key):
		errs = append(errs, field.Duplicate(path, key))
	case ref.Request == "":
		// The whole claim overlaps each of its requests referenced before.
		for k := range seen {
			if name, _, ok := strings.Cut(k, "/"); ok && name == ref.Name {
				errs = append(errs, field.Duplicate(path, ref.Name))
			}
		}
	}
	seen.Insert(key)
	return errs
}
