package core

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// containerContext is what the validation of a container needs from its pod.
type containerContext struct {
	volumes       map[string]corev1.VolumeSource // the volumes that passed validation
	claims        sets.Set[string]               // the names of spec.resourceClaims
	grace         *int64                         // spec.terminationGracePeriodSeconds
	os            *corev1.PodOS
	restartPolicy corev1.RestartPolicy
	hostUsers     bool
}

// validateContainers validates the regular containers: at least one, names
// unique among them, host ports unique across them.
func (c containerContext) validateContainers(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		ctr, path := &containers[i], fldPath.Index(i)
		errs = append(errs, c.validateContainerCommon(ctr, path)...)
		if names.Has(ctr.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), ctr.Name))
		} else {
			names.Insert(ctr.Name)
		}
		errs = append(errs, c.validateHandlersAndProbes(ctr, path)...)
		errs = append(errs, validateContainerRestartPolicy(ctr.RestartPolicy, ctr.RestartPolicyRules, path)...)
	}
	return append(errs, validateHostPortConflicts(containers, fldPath)...)
}

// validateHandlersAndProbes validates the lifecycle and probes of a
// container that may have them: a regular or a sidecar container.
func (c containerContext) validateHandlersAndProbes(ctr *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ctr.Lifecycle != nil {
		errs = append(errs, c.validateLifecycle(ctr.Lifecycle, path.Child("lifecycle"))...)
	}
	errs = append(errs, c.validateProbe(ctr.LivenessProbe, path.Child("livenessProbe"), liveness)...)
	errs = append(errs, c.validateProbe(ctr.ReadinessProbe, path.Child("readinessProbe"), readiness)...)
	return append(errs, c.validateProbe(ctr.StartupProbe, path.Child("startupProbe"), startup)...)
}

// validateInitContainers validates init containers: names unique among
// regular and init containers, probes and lifecycle for sidecars only.
func (c containerContext) validateInitContainers(containers, regular []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, ctr := range regular {
		names.Insert(ctr.Name)
	}
	for i := range containers {
		ctr, path := &containers[i], fldPath.Index(i)
		errs = append(errs, c.validateContainerCommon(ctr, path)...)
		errs = append(errs, validateContainerRestartPolicy(ctr.RestartPolicy, ctr.RestartPolicyRules, path)...)
		if names.Has(ctr.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), ctr.Name))
		} else if ctr.Name != "" {
			names.Insert(ctr.Name)
		}
		// Init containers run one at a time: their host ports clash only
		// within one container.
		errs = append(errs, validateHostPortConflicts([]corev1.Container{*ctr}, fldPath)...)
		sidecar := ctr.RestartPolicy != nil && *ctr.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			errs = append(errs, c.validateHandlersAndProbes(ctr, path)...)
		} else {
			errs = append(errs, forbidInitContainerHandlers(ctr, path)...)
			for j, p := range ctr.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Invalid(path.Child("resizePolicy").Index(j).Child("restartPolicy"),
						p.RestartPolicy, "must not be set to 'RestartContainer' for non-sidecar initContainers"))
				}
			}
		}
	}
	return errs
}

func forbidInitContainerHandlers(ctr *corev1.Container, path *field.Path) field.ErrorList {
	const msg = "may not be set for init containers without restartPolicy=Always"
	var errs field.ErrorList
	if ctr.Lifecycle != nil {
		errs = append(errs, field.Forbidden(path.Child("lifecycle"), msg))
	}
	if ctr.LivenessProbe != nil {
		errs = append(errs, field.Forbidden(path.Child("livenessProbe"), msg))
	}
	if ctr.ReadinessProbe != nil {
		errs = append(errs, field.Forbidden(path.Child("readinessProbe"), msg))
	}
	if ctr.StartupProbe != nil {
		errs = append(errs, field.Forbidden(path.Child("startupProbe"), msg))
	}
	return errs
}

// allowedEphemeralContainerFields are the fields of an ephemeral container
// that may be set: it may not take part in the pod's service.
var allowedEphemeralContainerFields = map[string]bool{
	"Name": true, "Image": true, "Command": true, "Args": true, "WorkingDir": true,
	"EnvFrom": true, "Env": true, "VolumeMounts": true, "VolumeDevices": true,
	"TerminationMessagePath": true, "TerminationMessagePolicy": true, "ImagePullPolicy": true,
	"SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true,
}

// validateEphemeralContainers validates ephemeral containers: names unique
// among all containers, a target that is a regular or init container, and
// only the fields a debugging container may have.
func (c containerContext) validateEphemeralContainers(ecs []corev1.EphemeralContainer, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, ctr := range append(append([]corev1.Container(nil), spec.Containers...), spec.InitContainers...) {
		others.Insert(ctr.Name)
		all.Insert(ctr.Name)
	}
	for i := range ecs {
		ec, path := &ecs[i], fldPath.Index(i)
		ctr := (*corev1.Container)(&ec.EphemeralContainerCommon)
		errs = append(errs, c.validateContainerCommon(ctr, path)...)
		errs = append(errs, validateImageWhitespace(ctr.Image, path.Child("image"))...)
		if all.Has(ec.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), ec.Name))
		} else {
			all.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(path.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, validateFieldAllowList(ec.EphemeralContainerCommon, allowedEphemeralContainerFields,
			"cannot be set for an Ephemeral Container", path)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(path.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(path.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// validateFieldAllowList forbids every field of the struct value that is
// set and not allowed, named as in JSON.
func validateFieldAllowList(value any, allowed map[string]bool, msg string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	t, v := reflect.TypeOf(value), reflect.ValueOf(value)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if allowed[f.Name] || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(fldPath.Child(string(unicode.ToLower(r))+f.Name[n:]), msg))
	}
	return errs
}

// validateContainerCommon applies the rules every kind of container shares.
func (c containerContext) validateContainerCommon(ctr *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ctr.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, validateDNSLabel(ctr.Name, path.Child("name"))...)
	}
	if ctr.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	switch ctr.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(path.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("terminationMessagePolicy"), ctr.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	errs = append(errs, validateContainerPorts(ctr.Ports, path.Child("ports"))...)
	errs = append(errs, validateEnv(ctr.Env, path.Child("env"))...)
	errs = append(errs, validateEnvFrom(ctr.EnvFrom, path.Child("envFrom"))...)
	errs = append(errs, c.validateVolumeMounts(ctr, path.Child("volumeMounts"))...)
	errs = append(errs, c.validateVolumeDevices(ctr, path.Child("volumeDevices"))...)
	errs = append(errs, validatePullPolicy(ctr.ImagePullPolicy, path.Child("imagePullPolicy"))...)
	errs = append(errs, validateResourceRequirements(&ctr.Resources, validateContainerResourceName, c.claims, path.Child("resources"))...)
	errs = append(errs, validateResizePolicy(ctr.ResizePolicy, path.Child("resizePolicy"), c.restartPolicy)...)
	return append(errs, validateContainerSecurityContext(ctr.SecurityContext, path.Child("securityContext"), c.hostUsers)...)
}

// validateImageWhitespace is a pod-only rule: templates keep accepting
// images with surrounding spaces, which some tools use as placeholders.
func validateImageWhitespace(image string, fldPath *field.Path) field.ErrorList {
	if len(image) != len(strings.TrimSpace(image)) {
		return field.ErrorList{field.Invalid(fldPath, image, "must not have leading or trailing whitespace")}
	}
	return nil
}

func validatePullPolicy(policy corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)})}
}

// validateHostPortConflicts refuses two ports taking the same host port,
// protocol and host IP.
func validateHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for ci, ctr := range containers {
		for pi, p := range ctr.Ports {
			if p.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
			if seen.Has(key) {
				errs = append(errs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			}
			seen.Insert(key)
		}
	}
	return errs
}
