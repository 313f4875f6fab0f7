package core

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation of pods and of the pod specs every workload embeds, with
// the rules, field paths and messages of kube-apiserver 1.37 and its default
// feature gates. The areas live in validation_pod_*.go.

// podOptions are what differs between the validation of a pod and of a pod
// template.
type podOptions struct {
	// isPod is set when the spec is a pod's, not one embedded in a workload:
	// host ports must then equal container ports under hostNetwork.
	isPod bool
}

// validatePodSpec validates the spec of a pod template.
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	return validatePodSpecWith(spec, podMeta, fldPath, podOptions{})
}

// validatePodSpecWith validates a pod spec; podMeta names the pod (nil for
// a template) for the names of the claims of ephemeral volumes.
func validatePodSpecWith(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, opts podOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	vols, volErrs := validateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"))
	errs = append(errs, volErrs...)
	errs = append(errs, validatePodResourceClaims(podMeta, spec.ResourceClaims, fldPath.Child("resourceClaims"))...)
	errs = append(errs, validatePodContainers(spec, vols, fldPath)...)
	errs = append(errs, validatePodResources(spec, fldPath)...)
	errs = append(errs, validatePodHostNetworkPorts(spec, fldPath, opts)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"))...)
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, fldPath.Child("dnsPolicy"))...)
	errs = append(errs, metavalidation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec, fldPath.Child("securityContext"))...)
	if sc := spec.ShareProcessNamespace; sc != nil && *sc && spec.HostPID {
		errs = append(errs, field.Invalid(fldPath.Child("shareProcessNamespace"), *sc, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	errs = append(errs, validateImagePullSecrets(spec.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	errs = append(errs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	errs = append(errs, validateReadinessGates(spec.ReadinessGates, fldPath.Child("readinessGates"))...)
	errs = append(errs, validateSchedulingGates(spec.SchedulingGates, fldPath.Child("schedulingGates"))...)
	errs = append(errs, validateHostUsers(spec, fldPath)...)
	errs = append(errs, validateHostnameOverride(spec, fldPath)...)
	errs = append(errs, validatePodNames(spec, fldPath)...)
	errs = append(errs, validatePodScheduling(spec, fldPath)...)
	errs = append(errs, validatePodOS(spec, fldPath)...)
	return append(errs, validateFileKeyRefVolumes(spec, fldPath)...)
}

// validatePodContainers validates the three lists of containers against the
// volumes that passed validation.
func validatePodContainers(spec *corev1.PodSpec, vols map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	c := containerContext{
		volumes: vols, claims: podClaimNames(spec), grace: spec.TerminationGracePeriodSeconds,
		os: spec.OS, restartPolicy: spec.RestartPolicy, hostUsers: spec.HostUsers == nil || *spec.HostUsers,
	}
	errs := c.validateContainers(spec.Containers, fldPath.Child("containers"))
	errs = append(errs, c.validateInitContainers(spec.InitContainers, spec.Containers, fldPath.Child("initContainers"))...)
	return append(errs, c.validateEphemeralContainers(spec.EphemeralContainers, spec, fldPath.Child("ephemeralContainers"))...)
}

// validatePodNames checks the names a pod spec refers to or gives.
func validatePodNames(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.ServiceAccountName != "" {
		for _, msg := range apivalidation.ValidateServiceAccountName(spec.ServiceAccountName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	if sa := spec.DeprecatedServiceAccount; sa != spec.ServiceAccountName { //nolint:staticcheck // must stay in step
		errs = append(errs, field.Invalid(fldPath.Child("deprecatedServiceAccount"), sa,
			fmt.Sprintf("must be the same as serviceAccountName: %q", spec.ServiceAccountName)))
	}
	errs = append(errs, validateSubdomainName(spec.NodeName, fldPath.Child("nodeName"))...)
	if spec.Hostname != "" {
		errs = append(errs, validateDNSLabel(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, validateDNSLabel(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	errs = append(errs, validateSubdomainName(spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	if spec.RuntimeClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.RuntimeClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("runtimeClassName"), *spec.RuntimeClassName, msg))
		}
	}
	return errs
}

// validatePodScheduling checks activeDeadlineSeconds and what the scheduler
// reads: tolerations, host aliases, preemption policy, overhead.
func validatePodScheduling(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	errs = append(errs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	errs = append(errs, validateHostAliases(spec.HostAliases, fldPath.Child("hostAliases"))...)
	if p := spec.PreemptionPolicy; p != nil {
		errs = append(errs, validatePreemptionPolicy(p, fldPath.Child("preemptionPolicy"))...)
	}
	if spec.Overhead != nil {
		errs = append(errs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead},
			validateContainerResourceName, nil, fldPath.Child("overhead"))...)
	}
	return errs
}

// validateSubdomainName checks an optional reference by name to an object
// whose names are DNS subdomains.
func validateSubdomainName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	return errs
}

func validateDNSLabel(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func validateDNSSubdomain(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}

// validatePodOS checks spec.os and, for a Linux pod, that nothing asks for
// Windows options.
func validatePodOS(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.OS == nil {
		return nil
	}
	osPath := fldPath.Child("os")
	switch spec.OS.Name {
	case "":
		return field.ErrorList{field.Required(osPath.Child("name"), "")}
	case corev1.Linux:
		return validateLinuxOnly(spec, fldPath)
	case corev1.Windows:
		return nil
	}
	return field.ErrorList{field.NotSupported(osPath, spec.OS.Name, []string{string(corev1.Linux), string(corev1.Windows)})}
}

func validateLinuxOnly(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	const msg = "windows options cannot be set for a linux pod"
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("securityContext", "windowsOptions"), msg))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			errs = append(errs, field.Forbidden(p.Child("securityContext", "windowsOptions"), msg))
		}
	})
	return errs
}

// visitContainers calls f on the init, regular and ephemeral containers of
// spec, in kube's order, with their paths.
func visitContainers(spec *corev1.PodSpec, fldPath *field.Path, f func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i], fldPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		f(&spec.Containers[i], fldPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), fldPath.Child("ephemeralContainers").Index(i))
	}
}

// validatePodAnnotations validates the annotations kube gives a meaning to
// on pods and pod templates. The Store validates the rest of the metadata.
func validatePodAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[corev1.MirrorPodAnnotationKey]; ok && spec.NodeName == "" {
		errs = append(errs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := annotations[corev1.PodDeletionCost]; ok && !validDeletionCost(v) {
		errs = append(errs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), v, "must be a 32bit integer"))
	}
	if p, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		errs = append(errs, validateSeccompAnnotation(p, fldPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for k, p := range annotations {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			errs = append(errs, validateSeccompAnnotation(p, fldPath.Child(k))...)
		}
	}
	return errs
}

// validDeletionCost accepts a decimal int32 without a plus sign or leading
// zeros.
func validDeletionCost(v string) bool {
	if v == "" || v[0] == '+' || (v[0] == '0' && v != "0") {
		return false
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err == nil
}

func validateSeccompAnnotation(p string, fldPath *field.Path) field.ErrorList {
	switch {
	case p == corev1.SeccompProfileRuntimeDefault, p == corev1.DeprecatedSeccompProfileDockerDefault, p == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(p, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(p, corev1.SeccompLocalhostProfileNamePrefix), fldPath)
	}
	return field.ErrorList{field.Invalid(fldPath, p, "must be a valid seccomp profile")}
}
