package core

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	fileModeErrorMsg     = "must be a number between 0 and 0777 (octal), both inclusive"
	emptyDirModeErrorMsg = "must be a number between 0 and 01777 (octal), both inclusive"
)

// validateVolumes checks the pod's volumes and returns those that passed,
// by name, for the containers' mounts to refer to.
func validateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	podName := ""
	if podMeta != nil {
		podName = podMeta.Name
	}
	// The claims the pod's ephemeral volumes will create, named after it.
	created := sets.New[string]()
	for _, v := range volumes {
		if podName != "" && v.Ephemeral != nil {
			created.Insert(podName + "-" + v.Name)
		}
	}
	names := sets.New[string]()
	vols := map[string]corev1.VolumeSource{}
	for i := range volumes {
		v, path := &volumes[i], fldPath.Index(i)
		el := validateVolumeSource(&v.VolumeSource, path, v.Name, podName)
		if v.Name == "" {
			el = append(el, field.Required(path.Child("name"), ""))
		} else {
			el = append(el, validateDNSLabel(v.Name, path.Child("name"))...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(path.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			vols[v.Name] = v.VolumeSource
		}
		errs = append(errs, el...)
		if v.PersistentVolumeClaim != nil && created.Has(v.PersistentVolumeClaim.ClaimName) {
			errs = append(errs, field.Invalid(path.Child("persistentVolumeClaim", "claimName"), v.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols, errs
}

// volumeType is one kind of volume source: the name kube reports when it is
// one too many, whether it is set, and its validation.
type volumeType struct {
	name     string
	set      bool
	validate func() field.ErrorList
}

// validateVolumeSource requires exactly one source. Each source after the
// first is forbidden under the name kube uses, misspellings included. The
// in-tree plugins of other storage systems count as a source but their
// fields are not checked.
func validateVolumeSource(src *corev1.VolumeSource, fldPath *field.Path, volName, podName string) field.ErrorList {
	none := func() field.ErrorList { return nil }
	types := []volumeType{
		{"emptyDir", src.EmptyDir != nil, func() field.ErrorList { return validateEmptyDir(src.EmptyDir, fldPath.Child("emptyDir")) }},
		{"hostPath", src.HostPath != nil, func() field.ErrorList { return validateHostPath(src.HostPath, fldPath.Child("hostPath")) }},
		{"gitRepo", src.GitRepo != nil, func() field.ErrorList { return validateGitRepo(src.GitRepo, fldPath.Child("gitRepo")) }},
		{"gcePersistentDisk", src.GCEPersistentDisk != nil, none},
		{"awsElasticBlockStore", src.AWSElasticBlockStore != nil, none},
		{"secret", src.Secret != nil, func() field.ErrorList { return validateSecretVolume(src.Secret, fldPath.Child("secret")) }},
		{"nfs", src.NFS != nil, func() field.ErrorList { return validateNFS(src.NFS, fldPath.Child("nfs")) }},
		{"iscsi", src.ISCSI != nil, none},
		{"glusterfs", src.Glusterfs != nil, none},
		{"flocker", src.Flocker != nil, none},
		{"persistentVolumeClaim", src.PersistentVolumeClaim != nil, func() field.ErrorList {
			return validateRequiredString(src.PersistentVolumeClaim.ClaimName, fldPath.Child("persistentVolumeClaim", "claimName"))
		}},
		{"rbd", src.RBD != nil, none},
		{"cinder", src.Cinder != nil, none},
		{"cephFS", src.CephFS != nil, none},
		{"quobyte", src.Quobyte != nil, none},
		// sic: kube's name for a downwardAPI that is one source too many.
		{"downwarAPI", src.DownwardAPI != nil, func() field.ErrorList {
			return validateDownwardAPIVolume(src.DownwardAPI, fldPath.Child("downwardAPI"))
		}},
		{"fc", src.FC != nil, none},
		{"flexVolume", src.FlexVolume != nil, none},
		{"configMap", src.ConfigMap != nil, func() field.ErrorList { return validateConfigMapVolume(src.ConfigMap, fldPath.Child("configMap")) }},
		{"azureFile", src.AzureFile != nil, none},
		{"vsphereVolume", src.VsphereVolume != nil, none},
		{"photonPersistentDisk", src.PhotonPersistentDisk != nil, none},
		{"portworxVolume", src.PortworxVolume != nil, none},
		{"azureDisk", src.AzureDisk != nil, none},
		{"storageos", src.StorageOS != nil, none},
		{"projected", src.Projected != nil, func() field.ErrorList { return validateProjected(src.Projected, fldPath.Child("projected")) }},
		{"scaleIO", src.ScaleIO != nil, none},
		{"csi", src.CSI != nil, func() field.ErrorList { return validateCSIVolume(src.CSI, fldPath.Child("csi")) }},
		{"ephemeral", src.Ephemeral != nil, func() field.ErrorList { return validateEphemeralVolume(src.Ephemeral, fldPath, volName, podName) }},
		{"image", src.Image != nil, func() field.ErrorList { return validateImageVolume(src.Image, fldPath.Child("image")) }},
	}
	var errs field.ErrorList
	n := 0
	for _, t := range types {
		if !t.set {
			continue
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child(t.name), "may not specify more than 1 volume type"))
			continue
		}
		n++
		errs = append(errs, t.validate()...)
	}
	if n == 0 {
		errs = append(errs, field.Required(fldPath, "must specify a volume type"))
	}
	return errs
}

func validateRequiredString(v string, fldPath *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return nil
}

func validateEmptyDir(e *corev1.EmptyDirVolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SizeLimit != nil && e.SizeLimit.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
	}
	if e.Mode != nil && (*e.Mode > 01777 || *e.Mode < 0) {
		errs = append(errs, field.Invalid(fldPath.Child("mode"), *e.Mode, emptyDirModeErrorMsg))
	}
	return errs
}

var hostPathTypes = []string{"", string(corev1.HostPathBlockDev), string(corev1.HostPathCharDev),
	string(corev1.HostPathDirectory), string(corev1.HostPathDirectoryOrCreate), string(corev1.HostPathFile),
	string(corev1.HostPathFileOrCreate), string(corev1.HostPathSocket)}

func validateHostPath(h *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	errs := validatePathNoBacksteps(h.Path, fldPath.Child("path"))
	if h.Type != nil && !sets.New(hostPathTypes...).Has(string(*h.Type)) {
		errs = append(errs, field.NotSupported(fldPath.Child("type"), h.Type, hostPathTypes))
	}
	return errs
}

func validateGitRepo(g *corev1.GitRepoVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(g.Repository, fldPath.Child("repository"))
	return append(errs, validateLocalDescendingPath(g.Directory, fldPath.Child("directory"))...)
}

func validateNFS(n *corev1.NFSVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(n.Server, fldPath.Child("server"))
	errs = append(errs, validateRequiredString(n.Path, fldPath.Child("path"))...)
	if !path.IsAbs(n.Path) {
		errs = append(errs, field.Invalid(fldPath.Child("path"), n.Path, "must be an absolute path"))
	}
	return errs
}

func validateFileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateUserID(user *int64, fldPath *field.Path) field.ErrorList {
	if user == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidUserID(*user) {
		errs = append(errs, field.Invalid(fldPath, *user, msg))
	}
	return errs
}

func validateSecretVolume(s *corev1.SecretVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(s.SecretName, fldPath.Child("secretName"))
	errs = append(errs, validateFileMode(s.DefaultMode, fldPath.Child("defaultMode"))...)
	errs = append(errs, validateUserID(s.DefaultUser, fldPath.Child("defaultUser"))...)
	for i := range s.Items {
		errs = append(errs, validateKeyToPath(&s.Items[i], fldPath.Child("items").Index(i))...)
	}
	return errs
}

func validateConfigMapVolume(c *corev1.ConfigMapVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(c.Name, fldPath.Child("name"))
	errs = append(errs, validateFileMode(c.DefaultMode, fldPath.Child("defaultMode"))...)
	errs = append(errs, validateUserID(c.DefaultUser, fldPath.Child("defaultUser"))...)
	for i := range c.Items {
		errs = append(errs, validateKeyToPath(&c.Items[i], fldPath.Child("items").Index(i))...)
	}
	return errs
}

func validateKeyToPath(kp *corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(kp.Key, fldPath.Child("key"))
	errs = append(errs, validateRequiredString(kp.Path, fldPath.Child("path"))...)
	errs = append(errs, validateLocalNonReservedPath(kp.Path, fldPath.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, fldPath.Child("mode"))...)
	return append(errs, validateUserID(kp.User, fldPath.Child("user"))...)
}

var volumeFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

func validateDownwardAPIVolume(d *corev1.DownwardAPIVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateFileMode(d.DefaultMode, fldPath.Child("defaultMode"))
	errs = append(errs, validateUserID(d.DefaultUser, fldPath.Child("defaultUser"))...)
	// kube reports the items' errors without their index.
	for i := range d.Items {
		errs = append(errs, validateDownwardAPIFile(&d.Items[i], fldPath)...)
	}
	return errs
}

func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(f.Path, fldPath.Child("path"))
	errs = append(errs, validateLocalNonReservedPath(f.Path, fldPath.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelector(f.FieldRef, volumeFieldPaths, fldPath.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(fldPath, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		errs = append(errs, validateResourceFieldSelector(f.ResourceFieldRef, true, fldPath.Child("resourceFieldRef"))...)
	default:
		errs = append(errs, field.Required(fldPath, "one of fieldRef and resourceFieldRef is required"))
	}
	errs = append(errs, validateFileMode(f.Mode, fldPath.Child("mode"))...)
	return append(errs, validateUserID(f.User, fldPath.Child("user"))...)
}

func validateCSIVolume(c *corev1.CSIVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateCSIDriverName(c.Driver, fldPath.Child("driver"))
	if ref := c.NodePublishSecretRef; ref != nil {
		if ref.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("nodePublishSecretRef", "name"), ""))
		} else {
			// kube reports a bad name at csi.name.
			errs = append(errs, validateSubdomainName(ref.Name, fldPath.Child("name"))...)
		}
	}
	return errs
}

func validateCSIDriverName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(fldPath, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	return errs
}

func validateImageVolume(i *corev1.ImageVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateRequiredString(i.Reference, fldPath.Child("reference"))
	return append(errs, validatePullPolicy(i.PullPolicy, fldPath.Child("pullPolicy"))...)
}

// validateLocalDescendingPath requires a relative path without "..".
func validateLocalDescendingPath(p string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(p) {
		errs = append(errs, field.Invalid(fldPath, p, "must be a relative path"))
	}
	return append(errs, validatePathNoBacksteps(p, fldPath)...)
}

// validatePathNoBacksteps refuses a ".." element.
func validatePathNoBacksteps(p string, fldPath *field.Path) field.ErrorList {
	for _, item := range strings.Split(filepath.ToSlash(p), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(fldPath, p, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalNonReservedPath also refuses a path starting with "..",
// which would hide the files of an atomic writer.
func validateLocalNonReservedPath(p string, fldPath *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(p, fldPath)
	if strings.HasPrefix(p, "..") && !strings.HasPrefix(p, "../") {
		errs = append(errs, field.Invalid(fldPath, p, "must not start with '..'"))
	}
	return errs
}

// validateEphemeralVolume checks the claim template of an ephemeral volume
// and the name of the claim it makes for the pod.
func validateEphemeralVolume(e *corev1.EphemeralVolumeSource, fldPath *field.Path, volName, podName string) field.ErrorList {
	var errs field.ErrorList
	tmplPath := fldPath.Child("ephemeral", "volumeClaimTemplate")
	if e.VolumeClaimTemplate == nil {
		errs = append(errs, field.Required(tmplPath, ""))
	} else {
		errs = append(errs, validateTemplateObjectMeta(&e.VolumeClaimTemplate.ObjectMeta, tmplPath.Child("metadata"))...)
		errs = append(errs, validatePVCSpec(&e.VolumeClaimTemplate.Spec, tmplPath.Child("spec"))...)
	}
	if podName != "" && volName != "" {
		claim := podName + "-" + volName
		for _, msg := range apivalidation.NameIsDNSSubdomain(claim, false) {
			errs = append(errs, field.Invalid(fldPath.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", claim, msg)))
		}
	}
	return errs
}
