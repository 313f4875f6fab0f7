package core

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodSecurityContext checks the pod's security context: user and
// group ids, sysctls, policies and the seccomp and AppArmor profiles.
// Windows options are not checked.
func validatePodSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateGroupID(sc.FSGroup, fldPath.Child("fsGroup"))...)
	errs = append(errs, validateUserID(sc.RunAsUser, fldPath.Child("runAsUser"))...)
	errs = append(errs, validateGroupID(sc.RunAsGroup, fldPath.Child("runAsGroup"))...)
	for i, gid := range sc.SupplementalGroups {
		errs = append(errs, validateGroupID(&gid, fldPath.Child("supplementalGroups").Index(i))...)
	}
	errs = append(errs, validateSysctls(sc.Sysctls, spec, fldPath.Child("sysctls"))...)
	if p := sc.FSGroupChangePolicy; p != nil && *p != corev1.FSGroupChangeAlways && *p != corev1.FSGroupChangeOnRootMismatch {
		errs = append(errs, field.NotSupported(fldPath.Child("fsGroupChangePolicy"), p,
			[]string{string(corev1.FSGroupChangeAlways), string(corev1.FSGroupChangeOnRootMismatch)}))
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmorProfile(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	if p := sc.SupplementalGroupsPolicy; p != nil && *p != corev1.SupplementalGroupsPolicyMerge && *p != corev1.SupplementalGroupsPolicyStrict {
		errs = append(errs, field.NotSupported(fldPath.Child("supplementalGroupsPolicy"), p,
			[]string{string(corev1.SupplementalGroupsPolicyMerge), string(corev1.SupplementalGroupsPolicyStrict)}))
	}
	if p := sc.SELinuxChangePolicy; p != nil && *p != corev1.SELinuxChangePolicyMountOption && *p != corev1.SELinuxChangePolicyRecursive {
		errs = append(errs, field.NotSupported(fldPath.Child("seLinuxChangePolicy"), *p,
			[]string{string(corev1.SELinuxChangePolicyMountOption), string(corev1.SELinuxChangePolicyRecursive)}))
	}
	return errs
}

func validateGroupID(gid *int64, fldPath *field.Path) field.ErrorList {
	if gid == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidGroupID(*gid) {
		errs = append(errs, field.Invalid(fldPath, *gid, msg))
	}
	return errs
}

const sysctlMaxLength = 253

var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateSysctls checks sysctl names, refusing the network and IPC ones of
// a pod that shares those namespaces with the node.
func validateSysctls(sysctls []corev1.Sysctl, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, s := range sysctls {
		path := fldPath.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(path, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlRegexp.MatchString(s.Name):
			errs = append(errs, field.Invalid(path, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlRegexp)))
		case names.Has(s.Name):
			errs = append(errs, field.Duplicate(path, s.Name))
		}
		switch ns := sysctlNamespace(s.Name); {
		case spec.HostNetwork && ns == "net":
			errs = append(errs, field.Invalid(path, s.Name, "may not be specified when 'hostNetwork' is true"))
		case spec.HostIPC && ns == "ipc":
			errs = append(errs, field.Invalid(path, s.Name, "may not be specified when 'hostIPC' is true"))
		}
		names.Insert(s.Name)
	}
	return errs
}

// ipcSysctls are the sysctls of the IPC namespace known by full name.
var ipcSysctls = sets.New("kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
	"kernel.shm_rmid_forced", "kernel.shm", "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg")

// sysctlNamespace is the Linux namespace a sysctl belongs to as far as
// sharing with the node matters: "ipc", "net" or "".
func sysctlNamespace(name string) string {
	// A name written with slashes as separators has its dots and slashes
	// swapped; a trailing wildcard is a prefix.
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, name)
	}
	if i := strings.IndexByte(name, '*'); i >= 0 {
		name = name[:i]
	}
	switch {
	case ipcSysctls.Has(name), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	case strings.HasPrefix(name, "net."):
		return "net"
	}
	return ""
}

// validateContainerSecurityContext checks a container's security context.
// Privileged containers are allowed, as with --allow-privileged=true on
// kube-apiserver (kubeadm's and most distributions' setting).
func validateContainerSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path, hostUsers bool) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateUserID(sc.RunAsUser, fldPath.Child("runAsUser"))...)
	errs = append(errs, validateGroupID(sc.RunAsGroup, fldPath.Child("runAsGroup"))...)
	if pm := sc.ProcMount; pm != nil {
		if *pm != corev1.DefaultProcMount && *pm != corev1.UnmaskedProcMount {
			errs = append(errs, field.NotSupported(fldPath.Child("procMount"), *pm,
				[]string{string(corev1.DefaultProcMount), string(corev1.UnmaskedProcMount)}))
		}
		if hostUsers && *pm == corev1.UnmaskedProcMount {
			errs = append(errs, field.Invalid(fldPath.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(fldPath, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	return append(errs, validateAppArmorProfile(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
}

func validateSeccompProfile(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("type"), sp.Type, []string{string(corev1.SeccompProfileTypeLocalhost),
			string(corev1.SeccompProfileTypeRuntimeDefault), string(corev1.SeccompProfileTypeUnconfined)}))
	}
	switch {
	case sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile == nil:
		errs = append(errs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
	case sp.Type == corev1.SeccompProfileTypeLocalhost:
		errs = append(errs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
	case sp.LocalhostProfile != nil:
		errs = append(errs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

func validateAppArmorProfile(p *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	lp := fldPath.Child("localhostProfile")
	switch p.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return field.ErrorList{field.Required(lp, "must be set when AppArmor type is Localhost")}
		}
		var errs field.ErrorList
		if strings.TrimSpace(*p.LocalhostProfile) != *p.LocalhostProfile {
			errs = append(errs, field.Invalid(lp, *p.LocalhostProfile, "must not be padded with whitespace"))
		}
		if len(*p.LocalhostProfile) > 4095 {
			errs = append(errs, field.TooLong(lp, "", 4095))
		}
		return errs
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if p.LocalhostProfile != nil {
			return field.ErrorList{field.Invalid(lp, p.LocalhostProfile, "can only be set when AppArmor type is Localhost")}
		}
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath.Child("type"), "type is required when appArmorProfile is set")}
	}
	return field.ErrorList{field.NotSupported(fldPath.Child("type"), p.Type, []string{string(corev1.AppArmorProfileTypeLocalhost),
		string(corev1.AppArmorProfileTypeRuntimeDefault), string(corev1.AppArmorProfileTypeUnconfined)})}
}
