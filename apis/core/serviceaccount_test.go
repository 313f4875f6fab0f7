package core

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceAccountPrepare(t *testing.T) {
	sa := &corev1.ServiceAccount{Secrets: []corev1.ObjectReference{{Name: "tok", Namespace: "other", Kind: "Secret", UID: "u"}}}
	ServiceAccountStrategy{}.PrepareForCreate(context.Background(), sa)
	if want := []corev1.ObjectReference{{Name: "tok"}}; !reflect.DeepEqual(sa.Secrets, want) {
		t.Errorf("secrets = %v, want %v", sa.Secrets, want)
	}
	sa.Secrets[0].Namespace = "again"
	ServiceAccountStrategy{}.PrepareForUpdate(context.Background(), sa, &corev1.ServiceAccount{})
	if sa.Secrets[0].Namespace != "" {
		t.Errorf("update kept namespace: %v", sa.Secrets)
	}
	if errs := (ServiceAccountStrategy{}).Validate(context.Background(), sa); len(errs) != 0 {
		t.Errorf("Validate = %v", errs)
	}
}

func TestServiceAccountWarnings(t *testing.T) {
	annotated := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Annotations: map[string]string{EnforceMountableSecretsAnnotation: "true"},
	}}
	plain := &corev1.ServiceAccount{}
	ctx := context.Background()
	if w := (ServiceAccountStrategy{}).WarningsOnCreate(ctx, annotated); len(w) != 1 {
		t.Errorf("create warnings = %v", w)
	}
	if w := (ServiceAccountStrategy{}).WarningsOnCreate(ctx, plain); len(w) != 0 {
		t.Errorf("create warnings without annotation = %v", w)
	}
	if w := (ServiceAccountStrategy{}).WarningsOnUpdate(ctx, annotated, plain); len(w) != 1 {
		t.Errorf("warnings when adding the annotation = %v", w)
	}
	if w := (ServiceAccountStrategy{}).WarningsOnUpdate(ctx, annotated, annotated); len(w) != 0 {
		t.Errorf("warnings when keeping the annotation = %v", w)
	}
}
