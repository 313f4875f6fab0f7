package noderestriction

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeGetters serve the objects given, NotFound as kube's listers word it.
func fakeGetters(claims []*corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, drivers []*storagev1.CSIDriver) Getters {
	find := func(resource string) func(name string) error {
		return func(name string) error { return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name) }
	}
	return Getters{
		Claims: func(_ context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
			for _, c := range claims {
				if c.Namespace == namespace && c.Name == name {
					return c, nil
				}
			}
			return nil, find("persistentvolumeclaim")(name)
		},
		Volumes: func(_ context.Context, name string) (*corev1.PersistentVolume, error) {
			for _, v := range volumes {
				if v.Name == name {
					return v, nil
				}
			}
			return nil, find("persistentvolume")(name)
		},
		CSIDrivers: func(_ context.Context, name string) (*storagev1.CSIDriver, error) {
			for _, d := range drivers {
				if d.Name == name {
					return d, nil
				}
			}
			return nil, apierrors.NewNotFound(storagev1.Resource("csidriver"), name)
		},
	}
}

func TestPodUsesAudience(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	claims := []*corev1.PersistentVolumeClaim{
		{ObjectMeta: meta("ns", "csi"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-csi"}},
		{ObjectMeta: meta("ns", "p-eph"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-csi"}},
		{ObjectMeta: meta("ns", "gce"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-gce"}},
		{ObjectMeta: meta("ns", "unbound")},
	}
	volumes := []*corev1.PersistentVolume{
		{ObjectMeta: meta("", "pv-csi"), Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: "claimed", VolumeHandle: "h"}}}},
		{ObjectMeta: meta("", "pv-gce"), Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "d"}}}},
	}
	driver := func(name string, audiences ...string) *storagev1.CSIDriver {
		d := &storagev1.CSIDriver{ObjectMeta: meta("", name)}
		for _, a := range audiences {
			d.Spec.TokenRequests = append(d.Spec.TokenRequests, storagev1.TokenRequest{Audience: a})
		}
		return d
	}
	drivers := []*storagev1.CSIDriver{driver("inline", "a-inline"), driver("claimed", "a-claimed"),
		driver("pd.csi.storage.gke.io", "a-gce"), driver("ebs.csi.aws.com", "a-ebs")}
	p := &Plugin{get: fakeGetters(claims, volumes, drivers)}

	token := func(aud string) corev1.VolumeSource {
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{}}, {ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: aud, Path: "t"}}}}}
	}
	claim := func(name string) corev1.VolumeSource {
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
	}
	inline := func(d string) corev1.VolumeSource {
		return corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: d}}
	}
	eph := corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}
	ebs := corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
	badEBS := corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://zone/nope"}}
	empty := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}

	for _, c := range []struct {
		name     string
		volumes  []corev1.VolumeSource
		audience string
		want     bool
		err      string
	}{
		{"no volumes", nil, "a", false, ""},
		{"projected token", []corev1.VolumeSource{empty, token("a")}, "a", true, ""},
		{"projected token, another audience", []corev1.VolumeSource{token("b")}, "a", false, ""},
		{"projected token without audience", []corev1.VolumeSource{token("")}, "", true, ""},
		{"inline CSI", []corev1.VolumeSource{inline("inline")}, "a-inline", true, ""},
		{"inline CSI, another audience", []corev1.VolumeSource{inline("inline")}, "a-claimed", false, ""},
		{"claim to CSI volume", []corev1.VolumeSource{claim("csi")}, "a-claimed", true, ""},
		{"ephemeral volume's claim", []corev1.VolumeSource{eph}, "a-claimed", true, ""},
		{"claim to in-tree volume migrated to CSI", []corev1.VolumeSource{claim("gce")}, "a-gce", true, ""},
		{"inline in-tree volume migrated to CSI", []corev1.VolumeSource{ebs}, "a-ebs", true, ""},
		{"a match wins over failed lookups", []corev1.VolumeSource{inline("missing"), claim("missing"), inline("inline")}, "a-inline", true, ""},
		{"one failed lookup", []corev1.VolumeSource{inline("missing")}, "a", false, `csidriver.storage.k8s.io "missing" not found`},
		{"failed lookups, each once", []corev1.VolumeSource{inline("missing"), claim("missing"), claim("unbound"), inline("missing")}, "a", false,
			`[csidriver.storage.k8s.io "missing" not found, persistentvolumeclaim "missing" not found, persistentvolume "" not found]`},
		{"in-tree volume that does not translate", []corev1.VolumeSource{badEBS}, "a", false,
			"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://zone/nope)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: meta("ns", "p")}
			for i, v := range c.volumes {
				pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: []string{"eph", "v1", "v2", "v3"}[i], VolumeSource: v})
			}
			got, err := p.podUsesAudience(context.Background(), pod, c.audience)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != c.want || gotErr != c.err {
				t.Errorf("got %v, %q; want %v, %q", got, gotErr, c.want, c.err)
			}
		})
	}
}
