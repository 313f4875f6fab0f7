package customresource

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

func TestStatusPrepareForUpdate(t *testing.T) {
	old := cronTab("a", spec(), map[string]any{"replicas": int64(1)})
	old.SetGeneration(3)
	old.SetLabels(map[string]string{"app": "cron"})
	old.SetResourceVersion("10")
	oldManaged := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	old.SetManagedFields(oldManaged)
	newManaged := []metav1.ManagedFieldsEntry{{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}

	tests := []struct {
		name       string
		obj        *unstructured.Unstructured
		wantStatus any // nil: none
	}{
		{"status taken, everything else kept",
			with(with(with(old, int64(7), "spec", "replicas"), "other", "metadata", "labels", "app"), int64(2), "status", "replicas"),
			map[string]any{"replicas": int64(2)}},
		{"status removed", without(with(old, int64(7), "spec", "replicas"), "status"), nil},
		{"status added to an object without", with(without(old, "status"), map[string]any{"labelSelector": "a=b"}, "status"),
			map[string]any{"labelSelector": "a=b"}},
	}
	s := newCronTabStrategy(t, true).StatusStrategy()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj.DeepCopy()
			obj.SetManagedFields(newManaged)
			s.PrepareForUpdate(context.Background(), obj, old.DeepCopy())
			if status, has := obj.Object["status"]; tt.wantStatus == nil && has {
				t.Errorf("status = %v, want none", status)
			} else if tt.wantStatus != nil && !reflect.DeepEqual(status, tt.wantStatus) {
				t.Errorf("status = %v, want %v", status, tt.wantStatus)
			}
			if !reflect.DeepEqual(obj.Object["spec"], old.Object["spec"]) {
				t.Errorf("spec = %v, want the old %v", obj.Object["spec"], old.Object["spec"])
			}
			if got := obj.GetLabels(); !reflect.DeepEqual(got, old.GetLabels()) {
				t.Errorf("labels = %v, want the old ones", got)
			}
			if g := obj.GetGeneration(); g != 3 {
				t.Errorf("generation = %d, want 3", g)
			}
			if got := obj.GetManagedFields(); len(got) != 1 || got[0].Manager != "controller" {
				t.Errorf("managed fields = %v, want the new ones", got)
			}
		})
	}
	if old.GetManagedFields()[0].Manager != "kubectl" {
		t.Error("old object changed")
	}
}

func TestStatusValidateUpdate(t *testing.T) {
	valid := cronTab("a", spec(), map[string]any{"replicas": int64(1), "labelSelector": "app=cron"})
	badSpec := with(valid, "every minute", "spec", "cronSpec")
	badImage := with(valid, "docker.io/cron", "spec", "image")
	tests := []struct {
		name     string
		obj, old *unstructured.Unstructured
		want     []fieldtest.Want
	}{
		{"valid", with(valid, int64(2), "status", "replicas"), valid, nil},
		{"no status", without(valid, "status"), valid, nil},
		{"status type", with(valid, "two", "status", "replicas"), valid,
			[]fieldtest.Want{{Type: "FieldValueTypeInvalid", Field: "status.replicas"}, fieldtest.Invalid(".status.replicas"), fieldtest.Invalid("<nil>")}},
		{"status type ratchets when unchanged", with(with(valid, "two", "status", "replicas"), "x", "status", "labelSelector"),
			with(valid, "two", "status", "replicas"),
			// the scale path check does not ratchet, and is no blocking error
			[]fieldtest.Want{fieldtest.Invalid(".status.replicas")}},
		{"spec is not validated by the schema", badSpec, badSpec, nil},
		{"negative status replicas", with(valid, int64(-1), "status", "replicas"), valid, []fieldtest.Want{fieldtest.Invalid(".status.replicas")}},
		{"spec replicas are not checked", with(with(valid, int64(-1), "spec", "replicas"), int64(2), "status", "replicas"),
			with(valid, int64(-1), "spec", "replicas"), nil},
		{"CEL rules run on the whole object and ratchet", with(badImage, int64(2), "status", "replicas"), badImage, nil},
		{"CEL rules on a changed spec", with(badImage, int64(2), "status", "replicas"), valid, []fieldtest.Want{fieldtest.Invalid("spec")}},
		{"wrong apiVersion", with(valid, "stable.example.com/v2", "apiVersion"), valid, []fieldtest.Want{fieldtest.Invalid("apiVersion")}},
	}
	s := newCronTabStrategy(t, true).StatusStrategy()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fieldtest.Check(t, s.ValidateUpdate(context.Background(), tt.obj, tt.old), tt.want...)
		})
	}
}
