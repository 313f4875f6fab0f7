package noderestriction

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/component-helpers/storage/ephemeral"
	csitranslation "k8s.io/csi-translation-lib"
)

// csi translates the in-tree volume sources migrated to CSI (EBS, GCE PD,
// Azure, Cinder, vSphere, Portworx) into the CSI drivers the kubelet hands
// them to, as kube's plugin does: their drivers' token requests count too.
var csi = csitranslation.New()

// podUsesAudience reports whether pod gets tokens for audience through one
// of its volumes: a projected service account token, or a CSI driver whose
// token requests name it (inline, through a claim or a generic ephemeral
// volume's claim and its bound volume, or an in-tree volume migrated to
// CSI). The lookups that failed on the way are the error, all of them, and
// only when no volume uses the audience.
func (p *Plugin) podUsesAudience(ctx context.Context, pod *corev1.Pod, audience string) (bool, error) {
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if projectsAudience(v, audience) {
			return true, nil
		}
		driver, err := p.csiDriverOf(ctx, pod, v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if driver == "" {
			continue
		}
		used, err := p.driverRequestsAudience(ctx, driver, audience)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if used {
			return true, nil
		}
	}
	return false, utilerrors.NewAggregate(errs)
}

// projectsAudience: v projects a service account token for audience.
func projectsAudience(v *corev1.Volume, audience string) bool {
	if v.Projected == nil {
		return false
	}
	for _, s := range v.Projected.Sources {
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.Audience == audience {
			return true
		}
	}
	return false
}

// csiDriverOf is the CSI driver that mounts v, "" if none does.
func (p *Plugin) csiDriverOf(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (string, error) {
	switch {
	case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
		return p.claimDriver(ctx, pod.Namespace, ephemeral.VolumeClaimName(pod, v))
	case v.PersistentVolumeClaim != nil:
		return p.claimDriver(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
	case v.CSI != nil:
		return v.CSI.Driver, nil
	case csi.IsInlineMigratable(v):
		pv, err := csi.TranslateInTreeInlineVolumeToCSI(logr.Discard(), v, pod.Namespace)
		if err != nil || pv == nil || pv.Spec.CSI == nil {
			return "", err
		}
		return pv.Spec.CSI.Driver, nil
	}
	return "", nil
}

// claimDriver is the CSI driver of the volume bound to claim name.
func (p *Plugin) claimDriver(ctx context.Context, namespace, name string) (string, error) {
	pvc, err := p.get.Claims(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	pv, err := p.get.Volumes(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	if pv.Spec.CSI != nil {
		return pv.Spec.CSI.Driver, nil
	}
	if !csi.IsPVMigratable(pv) {
		return "", nil
	}
	out, err := csi.TranslateInTreePVToCSI(logr.Discard(), pv)
	if err != nil || out == nil || out.Spec.CSI == nil {
		return "", err
	}
	return out.Spec.CSI.Driver, nil
}

// driverRequestsAudience: the CSI driver asks for pods' tokens for audience.
func (p *Plugin) driverRequestsAudience(ctx context.Context, driver, audience string) (bool, error) {
	d, err := p.get.CSIDrivers(ctx, driver)
	if err != nil {
		return false, err
	}
	for _, r := range d.Spec.TokenRequests {
		if r.Audience == audience {
			return true, nil
		}
	}
	return false, nil
}
