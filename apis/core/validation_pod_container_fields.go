package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var supportedPortProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}

// validateContainerPorts checks names (IANA service names, unique), port
// numbers and protocols.
func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		path := fldPath.Index(i)
		if p.Name != "" {
			if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
				}
			} else if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
			} else {
				names.Insert(p.Name)
			}
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(path.Child("containerPort"), ""))
		} else {
			errs = append(errs, validatePortNum(int(p.ContainerPort), path.Child("containerPort"))...)
		}
		if p.HostPort != 0 {
			errs = append(errs, validatePortNum(int(p.HostPort), path.Child("hostPort"))...)
		}
		if p.Protocol == "" {
			errs = append(errs, field.Required(path.Child("protocol"), ""))
		} else if !sets.New(supportedPortProtocols...).Has(string(p.Protocol)) {
			errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, supportedPortProtocols))
		}
	}
	return errs
}

func validatePortNum(port int, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(port) {
		errs = append(errs, field.Invalid(fldPath, port, msg))
	}
	return errs
}

// validateEnv checks the names of environment variables (kube's relaxed
// rule: any printable ASCII but '=') and their sources.
func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		path := fldPath.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), ev.Name, msg))
			}
		}
		errs = append(errs, validateEnvVarSource(ev, path.Child("valueFrom"))...)
	}
	return errs
}

var envFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
	"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

var resourceFieldPaths = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

// validateEnvVarSource requires exactly one source, and none with a value.
func validateEnvVarSource(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	from := ev.ValueFrom
	if from == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if from.FieldRef != nil {
		n++
		errs = append(errs, validateObjectFieldSelector(from.FieldRef, envFieldPaths, fldPath.Child("fieldRef"))...)
	}
	if from.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldSelector(from.ResourceFieldRef, false, fldPath.Child("resourceFieldRef"))...)
	}
	if from.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if from.SecretKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(from.SecretKeyRef.Name, from.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if from.FileKeyRef != nil {
		n++
		errs = append(errs, validateFileKeySelector(from.FileKeyRef, fldPath.Child("fileKeyRef"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return errs
}

// validateObjectFieldSelector checks a downward API field reference against
// the paths allowed where it is used.
func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, allowed sets.Set[string], fldPath *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	internal, err := convertDownwardAPIFieldPath(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	path, subscript, ok := splitSubscriptedPath(internal)
	switch {
	case ok && path == "metadata.annotations":
		return validateQualifiedName(strings.ToLower(subscript), fldPath)
	case ok && path == "metadata.labels":
		return validateQualifiedName(subscript, fldPath)
	case ok:
		return field.ErrorList{field.Invalid(fldPath, path, "does not support subscript")}
	case !allowed.Has(path):
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), path, sets.List(allowed))}
	}
	return nil
}

var downwardAPIFieldLabels = sets.New("metadata.annotations", "metadata.labels", "metadata.name",
	"metadata.namespace", "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
	"spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

// convertDownwardAPIFieldPath checks a downward API field path of a v1 pod
// and maps the legacy spec.host to spec.nodeName.
func convertDownwardAPIFieldPath(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if path, _, ok := splitSubscriptedPath(label); ok {
		if path == "metadata.annotations" || path == "metadata.labels" {
			return label, nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", label)
	}
	switch {
	case label == "spec.host":
		return "spec.nodeName", nil
	case downwardAPIFieldLabels.Has(label):
		return label, nil
	}
	return "", fmt.Errorf("field label not supported: %s", label)
}

// splitSubscriptedPath splits "metadata.labels['key']" into its path and
// subscript.
func splitSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	path, subscript, ok := strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok || path == "" {
		return fieldPath, "", false
	}
	return path, subscript, true
}

// validateResourceFieldSelector checks a downward API resource reference;
// a volume's must name its container.
func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, volume bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		errs = append(errs, field.Required(fldPath.Child("containerName"), ""))
	case fs.Resource == "":
		errs = append(errs, field.Required(fldPath.Child("resource"), ""))
	case !resourceFieldPaths.Has(fs.Resource) && !strings.HasPrefix(fs.Resource, "requests.hugepages-") &&
		!strings.HasPrefix(fs.Resource, "limits.hugepages-"):
		errs = append(errs, field.NotSupported(fldPath.Child("resource"), fs.Resource, sets.List(resourceFieldPaths)))
	}
	return append(errs, validateResourceDivisor(fs.Resource, fs.Divisor, fldPath)...)
}

var (
	cpuDivisors    = sets.New("1m", "1")
	memoryDivisors = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

func validateResourceDivisor(name string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	if divisor.IsZero() {
		return nil
	}
	const sizes = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
	d := divisor.String()
	var errs field.ErrorList
	switch name {
	case "limits.cpu", "requests.cpu":
		if !cpuDivisors.Has(d) {
			errs = append(errs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !memoryDivisors.Has(d) {
			errs = append(errs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values "+sizes+" are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !memoryDivisors.Has(d) {
			errs = append(errs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values "+sizes+" are supported with the local ephemeral storage resource"))
		}
	}
	if (strings.HasPrefix(name, "requests.hugepages-") || strings.HasPrefix(name, "limits.hugepages-")) && !memoryDivisors.Has(d) {
		errs = append(errs, field.Invalid(fldPath.Child("divisor"), name, "only divisor's values "+sizes+" are supported with the hugepages resource"))
	}
	return errs
}

// validateKeySelector checks a configMapKeyRef or secretKeyRef.
func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	if key == "" {
		return append(errs, field.Required(fldPath.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(fldPath.Child("key"), key, msg))
	}
	return errs
}

func validateFileKeySelector(s *corev1.FileKeySelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Key == "" {
		errs = append(errs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsRelaxedEnvVarName(s.Key) {
			errs = append(errs, field.Invalid(fldPath.Child("key"), s.Key, msg))
		}
	}
	if s.VolumeName == "" {
		errs = append(errs, field.Required(fldPath.Child("volumeName"), ""))
	} else {
		errs = append(errs, validateDNSLabel(s.VolumeName, fldPath.Child("volumeName"))...)
	}
	if s.Path == "" {
		return append(errs, field.Required(fldPath.Child("path"), ""))
	}
	return append(errs, validatePathNoBacksteps(s.Path, fldPath.Child("path"))...)
}

// validateEnvFrom checks prefixes and that each source names exactly one
// configmap or secret.
func validateEnvFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range sources {
		path := fldPath.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				errs = append(errs, field.Invalid(path.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.ConfigMapRef.Name, path.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.SecretRef.Name, path.Child("secretRef"))...)
		}
		// kube reports these two against the list, not the item.
		if n == 0 {
			errs = append(errs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	// kube checks these names as prefixes: a trailing dash passes.
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	return errs
}
