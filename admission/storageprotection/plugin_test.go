package storageprotection

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

var (
	pvs  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcs = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	vacs = storagev1.SchemeGroupVersion.WithResource("volumeattributesclasses")
)

func objectMeta(finalizers ...string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: "x", Finalizers: finalizers}
}

// TestAdmit: the finalizers an object is created with.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource schema.GroupVersionResource
		sub      string
		obj      runtime.Object
		want     []string
	}{
		{"volume", pvs, "", &corev1.PersistentVolume{ObjectMeta: objectMeta()}, []string{PVFinalizer}},
		{"claim", pvcs, "", &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta()}, []string{PVCFinalizer}},
		{"attributes class", vacs, "", &storagev1.VolumeAttributesClass{ObjectMeta: objectMeta()}, []string{VACFinalizer}},
		{"after the object's own", pvcs, "", &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta("example.com/keep")},
			[]string{"example.com/keep", PVCFinalizer}},
		{"once", pvs, "", &corev1.PersistentVolume{ObjectMeta: objectMeta(PVFinalizer, "example.com/keep")},
			[]string{PVFinalizer, "example.com/keep"}},
		{"another resource's finalizer does not count", pvs, "", &corev1.PersistentVolume{ObjectMeta: objectMeta(PVCFinalizer)},
			[]string{PVCFinalizer, PVFinalizer}},
		{"status", pvcs, "status", &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta()}, nil},
		{"not a protected type", pvcs, "", &corev1.ConfigMap{ObjectMeta: objectMeta()}, nil},
		{"another resource", corev1.SchemeGroupVersion.WithResource("configmaps"), "", &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta()}, nil},
		{"attributes classes of another group", schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "volumeattributesclasses"}, "",
			&storagev1.VolumeAttributesClass{ObjectMeta: objectMeta()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Create, Resource: tc.resource, Subresource: tc.sub, Name: "x", Object: tc.obj}
			if err := (Plugin{}).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			var got []string
			switch o := tc.obj.(type) {
			case *corev1.PersistentVolume:
				got = o.Finalizers
			case *corev1.PersistentVolumeClaim:
				got = o.Finalizers
			case *storagev1.VolumeAttributesClass:
				got = o.Finalizers
			case *corev1.ConfigMap:
				got = o.Finalizers
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("finalizers %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	if !(Plugin{}).Handles(admission.Create) {
		t.Error("creates are not handled")
	}
	for _, op := range []admission.Operation{admission.Update, admission.Delete, admission.Connect} {
		if (Plugin{}).Handles(op) {
			t.Errorf("%s is handled", op)
		}
	}
}
