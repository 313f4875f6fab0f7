package defaultclass

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

const (
	storageDefault     = "storageclass.kubernetes.io/is-default-class"
	betaStorageDefault = "storageclass.beta.kubernetes.io/is-default-class"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func class(name string, created time.Time, annotations ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: map[string]string{}}
	for i := 0; i < len(annotations); i += 2 {
		m.Annotations[annotations[i]] = annotations[i+1]
	}
	return m
}

// lister lists classes, counting the lists; a nil list fails.
func lister(classes []metav1.ObjectMeta, lists *int) Lister {
	return func(context.Context) ([]metav1.ObjectMeta, error) {
		*lists++
		if classes == nil {
			return nil, errors.New("etcd is down")
		}
		return classes, nil
	}
}

func pvcAttrs(sub string, obj runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		Subresource: sub, Namespace: "ns", Name: "c", Object: obj}
}

// TestStorage: the class a claim is given, or the refusal.
func TestStorage(t *testing.T) {
	named := func(n string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &n}}
	}
	betaNamed := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "x"}}}
	for _, tc := range []struct {
		name    string
		classes []metav1.ObjectMeta
		a       *admission.Attributes
		want    *string // the claim's class after
		lists   int
		message string // a 403's
	}{
		{name: "no classes", classes: []metav1.ObjectMeta{}, a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), lists: 1},
		{name: "no default", classes: []metav1.ObjectMeta{class("a", t0), class("b", t0, storageDefault, "false")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), lists: 1},
		{name: "the default", classes: []metav1.ObjectMeta{class("a", t0), class("b", t0, storageDefault, "true")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), want: ptr.To("b"), lists: 1},
		{name: "the beta annotation", classes: []metav1.ObjectMeta{class("a", t0, betaStorageDefault, "true")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), want: ptr.To("a"), lists: 1},
		{name: "only \"true\" marks a default", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "True")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), lists: 1},
		{name: "the newest default", classes: []metav1.ObjectMeta{class("old", t0, storageDefault, "true"), class("new", t0.Add(time.Second), storageDefault, "true")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), want: ptr.To("new"), lists: 1},
		{name: "defaults made at once, by name", classes: []metav1.ObjectMeta{class("b", t0, storageDefault, "true"), class("a", t0, betaStorageDefault, "true")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), want: ptr.To("a"), lists: 1},
		{name: "the ingress annotation marks no storage class", classes: []metav1.ObjectMeta{class("a", t0, networkingv1.AnnotationIsDefaultIngressClass, "true")},
			a: pvcAttrs("", &corev1.PersistentVolumeClaim{}), lists: 1},
		{name: "a claim naming a class", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "true")},
			a: pvcAttrs("", named("mine")), want: ptr.To("mine")},
		{name: "a claim naming no class, explicitly", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "true")},
			a: pvcAttrs("", named("")), want: ptr.To("")},
		{name: "a claim naming its class by the beta annotation", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "true")},
			a: pvcAttrs("", betaNamed)},
		{name: "classes cannot be listed", a: pvcAttrs("", &corev1.PersistentVolumeClaim{}),
			lists: 1, message: `persistentvolumeclaims "c" is forbidden: etcd is down`},
		{name: "status", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "true")}, a: pvcAttrs("status", &corev1.PersistentVolumeClaim{})},
		{name: "not a claim", classes: []metav1.ObjectMeta{class("a", t0, storageDefault, "true")}, a: pvcAttrs("", &corev1.ConfigMap{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists := 0
			err := NewStorage(lister(tc.classes, &lists)).Admit(context.Background(), tc.a)
			if tc.message != "" {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != http.StatusForbidden || err.Error() != tc.message {
					t.Errorf("Admit = %v, want 403 %q", err, tc.message)
				}
			} else if err != nil {
				t.Errorf("Admit = %v", err)
			}
			if pvc, ok := tc.a.Object.(*corev1.PersistentVolumeClaim); ok && !ptr.Equal(pvc.Spec.StorageClassName, tc.want) {
				t.Errorf("class %v, want %v", ptr.Deref(pvc.Spec.StorageClassName, "<nil>"), ptr.Deref(tc.want, "<nil>"))
			}
			if lists != tc.lists {
				t.Errorf("listed %d times, want %d", lists, tc.lists)
			}
		})
	}
}

func ingAttrs(obj runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Kind: networkingv1.SchemeGroupVersion.WithKind("Ingress"),
		Resource: networkingv1.SchemeGroupVersion.WithResource("ingresses"), Namespace: "ns", Name: "i", Object: obj}
}

// TestIngress: the class an Ingress is given, or the refusal.
func TestIngress(t *testing.T) {
	classes := []metav1.ObjectMeta{class("nginx", t0, networkingv1.AnnotationIsDefaultIngressClass, "true"), class("other", t0),
		class("storage", t0.Add(time.Hour), storageDefault, "true")}
	lists := 0
	p := NewIngress(lister(classes, &lists))

	ing := &networkingv1.Ingress{}
	if err := p.Admit(context.Background(), ingAttrs(ing)); err != nil || ptr.Deref(ing.Spec.IngressClassName, "<nil>") != "nginx" {
		t.Errorf("no class: %v, class %v", err, ptr.Deref(ing.Spec.IngressClassName, "<nil>"))
	}
	named := &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("mine")}}
	annotated := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "old"}}}
	lists = 0
	for name, obj := range map[string]*networkingv1.Ingress{"a class": named, "the old annotation": annotated} {
		want := obj.Spec.IngressClassName
		if err := p.Admit(context.Background(), ingAttrs(obj)); err != nil || !ptr.Equal(obj.Spec.IngressClassName, want) {
			t.Errorf("%s: %v, class %v", name, err, ptr.Deref(obj.Spec.IngressClassName, "<nil>"))
		}
	}
	if lists != 0 {
		t.Errorf("classes listed for ingresses that name one: %d", lists)
	}

	err := p.Admit(context.Background(), ingAttrs(&corev1.ConfigMap{}))
	if !apierrors.IsInternalError(err) || err.Error() != "Internal error occurred: Expected Ingress resource, got: networking.k8s.io/v1, Kind=Ingress" {
		t.Errorf("not an Ingress: %v", err)
	}
	failing := NewIngress(lister(nil, &lists))
	if err := failing.Admit(context.Background(), ingAttrs(&networkingv1.Ingress{})); !apierrors.IsForbidden(err) || err.Error() != `ingresses.networking.k8s.io "i" is forbidden: etcd is down` {
		t.Errorf("classes cannot be listed: %v", err)
	}
	extensions := ingAttrs(&corev1.ConfigMap{})
	extensions.Resource.Group = "extensions"
	if err := p.Admit(context.Background(), extensions); err != nil {
		t.Errorf("ingresses of another group: %v", err)
	}
	if !p.Handles(admission.Create) || p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates only")
	}
}
