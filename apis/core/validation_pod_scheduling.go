package core

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of the pod-wide fields: policies, DNS, networking, scheduling.

func validateRestartPolicy(p corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []string{string(corev1.RestartPolicyAlways),
		string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)})}
}

func validateDNSPolicy(p corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []string{string(corev1.DNSClusterFirstWithHostNet),
		string(corev1.DNSClusterFirst), string(corev1.DNSDefault), string(corev1.DNSNone)})}
}

func validatePreemptionPolicy(p *corev1.PreemptionPolicy, fldPath *field.Path) field.ErrorList {
	switch *p {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)})}
}

// The limits of the resolver configuration, from libc.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

// validatePodDNSConfig requires a nameserver under dnsPolicy None and checks
// the resolver configuration against libc's limits.
func validatePodDNSConfig(c *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(fldPath, "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None")}
		}
	}
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if len(c.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(fldPath.Child("nameservers"), c.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, validation.IsValidIPForLegacyField(fldPath.Child("nameservers").Index(i), ns, true, nil)...)
	}
	if len(c.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(fldPath.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(fldPath.Child("searches"), c.Searches,
			fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, search := range c.Searches {
		if search == "." {
			continue
		}
		search = strings.TrimSuffix(search, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
			errs = append(errs, field.Invalid(fldPath.Child("searches").Index(i), search, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

// validatePodHostNetworkPorts: on the host network a container port is a
// host port. A pod must say so; a template may leave hostPort unset, the
// pods made from it get it defaulted.
func validatePodHostNetworkPorts(spec *corev1.PodSpec, fldPath *field.Path, opts podOptions) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		for j, p := range c.Ports {
			if (opts.isPod || p.HostPort != 0) && p.HostPort != p.ContainerPort {
				errs = append(errs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"),
					p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

// validateImagePullSecrets allows nothing but a name in each reference.
func validateImagePullSecrets(refs []corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ref := range refs {
		if !reflect.DeepEqual(corev1.LocalObjectReference{Name: ref.Name}, ref) {
			errs = append(errs, field.Invalid(fldPath.Index(i), ref, "only name may be set"))
		}
	}
	return errs
}

func validateReadinessGates(gates []corev1.PodReadinessGate, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range gates {
		errs = append(errs, validateQualifiedName(string(g.ConditionType), fldPath.Index(i).Child("conditionType"))...)
	}
	return errs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		errs = append(errs, validateQualifiedName(g.Name, fldPath.Index(i))...)
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(fldPath.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

// validateHostUsers refuses host namespaces and block devices in a pod with
// its own user namespace.
func validateHostUsers(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	const msg = "when `hostUsers` is false"
	var errs field.ErrorList
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(fldPath.Child("hostNetwork"), msg))
	}
	// kube spells these two in Go's case.
	if spec.HostPID {
		errs = append(errs, field.Forbidden(fldPath.Child("HostPID"), msg))
	}
	if spec.HostIPC {
		errs = append(errs, field.Forbidden(fldPath.Child("HostIPC"), msg))
	}
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		if len(c.VolumeDevices) > 0 {
			errs = append(errs, field.Forbidden(p.Child("volumeDevices"), msg))
		}
	})
	return errs
}

func validateHostnameOverride(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	h := spec.HostnameOverride
	if h == nil {
		return nil
	}
	path := fldPath.Child("hostnameOverride")
	var errs field.ErrorList
	if spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN {
		errs = append(errs, field.Forbidden(path, "may not be specified when setHostnameAsFQDN is true"))
	}
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(path, "may not be specified when hostNetwork is true"))
	}
	if len(*h) > 64 {
		errs = append(errs, field.TooLong(path, "", 64))
	}
	return append(errs, validateDNSSubdomain(*h, path)...)
}

// validateTolerations checks keys, operators, values and effects. The Lt
// and Gt operators of the alpha TaintTolerationComparisonOperators gate are
// refused, as in a default kube.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		path := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metavalidation.ValidateLabelName(t.Key, path.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(path.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(path.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual),
				string(corev1.TolerationOpExists), string(corev1.TolerationOpLt), string(corev1.TolerationOpGt)}))
		default:
			errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator,
				[]string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		if t.Effect != "" {
			errs = append(errs, validateTaintEffect(t.Effect, path.Child("effect"))...)
		}
	}
	return errs
}

func validateTaintEffect(e corev1.TaintEffect, fldPath *field.Path) field.ErrorList {
	switch e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, e, []string{string(corev1.TaintEffectNoSchedule),
		string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)})}
}

func validateHostAliases(aliases []corev1.HostAlias, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, a := range aliases {
		errs = append(errs, validation.IsValidIPForLegacyField(fldPath.Index(i).Child("ip"), a.IP, true, nil)...)
		for j, h := range a.Hostnames {
			errs = append(errs, validateDNSSubdomain(h, fldPath.Index(i).Child("hostnames").Index(j))...)
		}
	}
	return errs
}

// validateFileKeyRefVolumes requires the volume an env fileKeyRef reads to
// exist and be an emptyDir.
func validateFileKeyRefVolumes(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	sources := map[string]*corev1.VolumeSource{}
	for i := range spec.Volumes {
		sources[spec.Volumes[i].Name] = &spec.Volumes[i].VolumeSource
	}
	var errs field.ErrorList
	visitContainers(spec, fldPath, func(c *corev1.Container, p *field.Path) {
		for j, env := range c.Env {
			if env.ValueFrom == nil || env.ValueFrom.FileKeyRef == nil {
				continue
			}
			name := env.ValueFrom.FileKeyRef.VolumeName
			path := p.Child("env").Index(j).Child("valueFrom", "fileKeyRef", "volumeName")
			if src, ok := sources[name]; !ok {
				errs = append(errs, field.NotFound(path, name))
			} else if src.EmptyDir == nil {
				errs = append(errs, field.Invalid(path, name, "referenced volume must be of type emptyDir"))
			}
		}
	})
	return errs
}
