package rest

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// preconditioned is an update that holds only for the object of uid.
type preconditioned struct {
	UpdatedObjectFunc
	uid types.UID
}

func (p preconditioned) Preconditions() *metav1.Preconditions {
	return &metav1.Preconditions{UID: &p.uid}
}

func TestKeepPreconditions(t *testing.T) {
	inner := UpdatedObjectFunc(func(context.Context, runtime.Object) (runtime.Object, error) {
		return nil, errors.New("the wrapped update must not run")
	})
	wrapper := UpdatedObjectFunc(func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		cm := old.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"by": "wrapper"}
		return cm, nil
	})
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}

	for _, tc := range []struct {
		name    string
		objInfo UpdatedObjectInfo
		wantUID types.UID // "" for no preconditions
	}{
		{"a PUT's uid is kept", preconditioned{inner, "uid-1"}, "uid-1"},
		{"no preconditions to keep", inner, ""},
	} {
		info := KeepPreconditions(tc.objInfo, wrapper)
		got, err := info.UpdatedObject(context.Background(), old)
		if err != nil || got.(*corev1.ConfigMap).Data["by"] != "wrapper" {
			t.Errorf("%s: UpdatedObject = %v, %v; want the wrapper's object", tc.name, got, err)
		}
		p, ok := info.(Preconditioner)
		if !ok {
			t.Fatalf("%s: the wrapped update is no Preconditioner", tc.name)
		}
		switch pre := p.Preconditions(); {
		case tc.wantUID == "" && pre != nil:
			t.Errorf("%s: preconditions %+v, want none", tc.name, pre)
		case tc.wantUID != "" && (pre == nil || pre.UID == nil || *pre.UID != tc.wantUID):
			t.Errorf("%s: preconditions %+v, want uid %s", tc.name, pre, tc.wantUID)
		}
	}
	if old.Data != nil {
		t.Errorf("the old object was changed: %v", old.Data)
	}
}

func TestValidateAll(t *testing.T) {
	obj := &corev1.ConfigMap{}
	if err := ValidateAllObjectFunc(context.Background(), obj); err != nil {
		t.Errorf("ValidateAllObjectFunc = %v", err)
	}
	if err := ValidateAllObjectUpdateFunc(context.Background(), obj, obj); err != nil {
		t.Errorf("ValidateAllObjectUpdateFunc = %v", err)
	}
}
