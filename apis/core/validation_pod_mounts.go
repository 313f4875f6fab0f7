package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateVolumeMounts checks a container's mounts: a known volume, a
// unique mount path, no clash with its devices, sub paths inside the volume.
func (c containerContext) validateVolumeMounts(ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	devices := map[string]string{}
	for _, d := range ctr.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	mountPoints := sets.New[string]()
	for i, m := range ctr.VolumeMounts {
		path := fldPath.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if _, ok := c.volumes[m.Name]; !ok {
			errs = append(errs, field.NotFound(path.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(path.Child("mountPath"), ""))
		}
		if mountPoints.Has(m.MountPath) {
			errs = append(errs, field.Invalid(path.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPoints.Insert(m.MountPath)
		if _, ok := devices[m.Name]; ok {
			errs = append(errs, field.Invalid(path.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		if hasValue(devices, m.MountPath) {
			errs = append(errs, field.Invalid(path.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
		}
		errs = append(errs, c.validateMountOptions(ctr, m, fldPath, path)...)
	}
	return errs
}

// validateMountOptions checks sub paths, propagation and read-only options.
// kube reports several of them at the list's path rather than the item's.
func (c containerContext) validateMountOptions(ctr *corev1.Container, m corev1.VolumeMount, listPath, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.SubPath != "" {
		errs = append(errs, validateLocalDescendingPath(m.SubPath, listPath.Child("subPath"))...)
	}
	if m.SubPathExpr != "" {
		if m.SubPath != "" {
			errs = append(errs, field.Invalid(path.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
		errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, listPath.Child("subPathExpr"))...)
	}
	if m.MountPropagation != nil {
		errs = append(errs, validateMountPropagation(*m.MountPropagation, ctr, listPath.Child("mountPropagation"))...)
	}
	errs = append(errs, validateRecursiveReadOnly(m, listPath.Child("recursiveReadOnly"))...)
	seen := sets.New[string]()
	for j, opt := range m.BindMountOptions {
		optPath := path.Child("bindMountOptions").Index(j)
		if !sets.New(bindMountOptions...).Has(opt) {
			errs = append(errs, field.NotSupported(optPath, opt, bindMountOptions))
		}
		if seen.Has(opt) {
			errs = append(errs, field.Duplicate(optPath, opt))
		}
		seen.Insert(opt)
	}
	if vs, ok := c.volumes[m.Name]; ok && len(m.BindMountOptions) > 0 && vs.Image != nil {
		errs = append(errs, field.Invalid(path.Child("bindMountOptions"), m.BindMountOptions, "bindMountOptions may not be used with image volumes"))
	}
	return errs
}

var bindMountOptions = []string{string(corev1.BindMountOptionNoDev), string(corev1.BindMountOptionNoExec), string(corev1.BindMountOptionNoSUID)}

var mountPropagations = []string{string(corev1.MountPropagationBidirectional),
	string(corev1.MountPropagationHostToContainer), string(corev1.MountPropagationNone)}

func validateMountPropagation(mp corev1.MountPropagationMode, ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sets.New(mountPropagations...).Has(string(mp)) {
		errs = append(errs, field.NotSupported(fldPath, mp, mountPropagations))
	}
	sc := ctr.SecurityContext
	privileged := sc != nil && sc.Privileged != nil && *sc.Privileged
	if mp == corev1.MountPropagationBidirectional && !privileged {
		errs = append(errs, field.Forbidden(fldPath, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return errs
}

func validateRecursiveReadOnly(m corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var errs field.ErrorList
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(fldPath, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			errs = append(errs, field.Forbidden(fldPath, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath, *m.RecursiveReadOnly, []string{string(corev1.RecursiveReadOnlyDisabled),
			string(corev1.RecursiveReadOnlyEnabled), string(corev1.RecursiveReadOnlyIfPossible)}))
	}
	return errs
}

// validateVolumeDevices checks a container's block devices: a claim-backed
// volume, unique names and paths, no clash with its mounts.
func (c containerContext) validateVolumeDevices(ctr *corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	paths, names := sets.New[string](), sets.New[string]()
	for i, d := range ctr.VolumeDevices {
		path := fldPath.Index(i)
		vs, found := c.volumes[d.Name]
		if d.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "must be unique"))
		}
		if found && vs.PersistentVolumeClaim == nil && vs.Ephemeral == nil {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !found {
			errs = append(errs, field.NotFound(path.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(path.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(validatePathNoBacksteps(d.DevicePath, path)) > 0 {
			errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if _, ok := mounts[d.Name]; ok {
			errs = append(errs, field.Invalid(path.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		if hasValue(mounts, d.DevicePath) {
			errs = append(errs, field.Invalid(path.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}

func hasValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}
