package pvcresize

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

// classes: "grow" allows expansion, "fixed" does not, "unset" does not
// say; "broken" cannot be read and any other is not found.
func classes(_ context.Context, name string) (*storagev1.StorageClass, error) {
	switch name {
	case "grow":
		return &storagev1.StorageClass{AllowVolumeExpansion: ptr.To(true)}, nil
	case "fixed":
		return &storagev1.StorageClass{AllowVolumeExpansion: ptr.To(false)}, nil
	case "unset":
		return &storagev1.StorageClass{}, nil
	case "broken":
		return nil, errors.New("etcd is down")
	}
	return nil, apierrors.NewNotFound(storagev1.Resource("storageclasses"), name)
}

type claimOpt func(*corev1.PersistentVolumeClaim)

func claim(size string, opts ...claimOpt) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	if size != "" {
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func class(name string) claimOpt {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = &name }
}

func betaClass(name string) claimOpt {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: name}
	}
}

func phase(p corev1.PersistentVolumeClaimPhase) claimOpt {
	return func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = p }
}

const (
	notBound     = `persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded`
	notResizable = `persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
)

// TestValidate: which claim updates may grow, with kube's messages.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		obj, old runtime.Object
		want     string // "": admitted
	}{
		{"grown in a class that allows it", claim("2Gi", class("grow")), claim("1Gi", class("grow")), ""},
		{"same size", claim("1Gi", class("fixed")), claim("1Gi", class("fixed")), ""},
		{"same size, written otherwise", claim("1024Mi", class("fixed")), claim("1Gi", class("fixed")), ""},
		{"shrunk", claim("1Gi", class("fixed")), claim("2Gi", class("fixed")), ""},
		{"grown, not bound", claim("2Gi", class("grow"), phase(corev1.ClaimPending)), claim("1Gi", class("grow"), phase(corev1.ClaimPending)), notBound},
		{"grown, bound only in the new object", claim("2Gi", class("grow")), claim("1Gi", class("grow"), phase(corev1.ClaimPending)), notBound},
		{"grown from no size", claim("1Gi", class("fixed")), claim("", class("fixed")), notResizable},
		{"grown, class does not allow it", claim("2Gi", class("fixed")), claim("1Gi", class("fixed")), notResizable},
		{"grown, class does not say", claim("2Gi", class("unset")), claim("1Gi", class("unset")), notResizable},
		{"grown, no class", claim("2Gi"), claim("1Gi"), notResizable},
		{"grown, empty class", claim("2Gi", class("")), claim("1Gi", class("")), notResizable},
		{"grown, class changed", claim("2Gi", class("grow")), claim("1Gi", class("fixed")), notResizable},
		{"grown, class missing", claim("2Gi", class("gone")), claim("1Gi", class("gone")), notResizable},
		{"grown, class unreadable", claim("2Gi", class("broken")), claim("1Gi", class("broken")), notResizable},
		{"grown, beta annotation names the class", claim("2Gi", betaClass("grow"), class("fixed")), claim("1Gi", betaClass("grow"), class("fixed")), ""},
		{"grown, beta annotation overrides", claim("2Gi", betaClass("fixed"), class("grow")), claim("1Gi", betaClass("fixed"), class("grow")), notResizable},
		{"not claims", &corev1.ConfigMap{}, claim("1Gi"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
				Namespace: "ns", Name: "c", Object: tc.obj, OldObject: tc.old}
			err := New(classes).Validate(context.Background(), a)
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Errorf("Validate = %v\nwant 403 %s", err, tc.want)
			}
		})
	}
}

// TestIgnored: the status subresource and other resources are not
// checked; the plugin handles updates only.
func TestIgnored(t *testing.T) {
	p := New(classes)
	status := &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		Subresource: "status", Name: "c", Object: claim("2Gi"), OldObject: claim("1Gi", phase(corev1.ClaimPending))}
	volumes := &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumes"),
		Name: "c", Object: claim("2Gi"), OldObject: claim("1Gi", phase(corev1.ClaimPending))}
	for name, a := range map[string]*admission.Attributes{"status": status, "volumes": volumes} {
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !p.Handles(admission.Update) || p.Handles(admission.Create) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want updates only")
	}
}

// TestClassOf: the beta annotation first, even empty, then the spec.
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		want string
	}{
		{"none", claim(""), ""},
		{"spec", claim("", class("a")), "a"},
		{"annotation", claim("", betaClass("b"), class("a")), "b"},
		{"empty annotation", claim("", betaClass(""), class("a")), ""},
	} {
		if got := ClassOf(tc.pvc); got != tc.want {
			t.Errorf("%s: ClassOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}
