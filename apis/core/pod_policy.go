package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodPolicy is what the cluster allows in pod specs, set by
// --allow-privileged. Its zero value allows everything; the kube server sets
// ForbidPrivileged unless --allow-privileged=true, kube's default.
//
// Every strategy whose objects carry a pod spec (pods, pod templates and the
// workloads) embeds it, so that one server's flag never leaks into another's
// in the same process.
type PodPolicy struct {
	ForbidPrivileged bool
}

// Validate refuses what the policy forbids in spec, as kube's validation
// does: privileged containers and Windows hostProcess containers are
// "disallowed by cluster policy".
func (p PodPolicy) Validate(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if !p.ForbidPrivileged || spec == nil {
		return nil
	}
	var errs field.ErrorList
	hostProcess := podHostProcess(spec)
	visit := func(path *field.Path, sc *corev1.SecurityContext) {
		if sc == nil {
			return
		}
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Forbidden(path.Child("securityContext", "privileged"), "disallowed by cluster policy"))
		}
		if w := sc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
			hostProcess = true
		}
	}
	for i := range spec.InitContainers {
		visit(fldPath.Child("initContainers").Index(i), spec.InitContainers[i].SecurityContext)
	}
	for i := range spec.Containers {
		visit(fldPath.Child("containers").Index(i), spec.Containers[i].SecurityContext)
	}
	for i := range spec.EphemeralContainers {
		visit(fldPath.Child("ephemeralContainers").Index(i), spec.EphemeralContainers[i].SecurityContext)
	}
	if hostProcess {
		errs = append(errs, field.Forbidden(fldPath, "hostProcess containers are disallowed by cluster policy"))
	}
	return errs
}

func podHostProcess(spec *corev1.PodSpec) bool {
	sc := spec.SecurityContext
	return sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess
}

// ValidateTemplate is Validate for a pod template's spec.
func (p PodPolicy) ValidateTemplate(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return nil
	}
	return p.Validate(&t.Spec, fldPath.Child("spec"))
}
