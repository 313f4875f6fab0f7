package node

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateRuntimeClass(t *testing.T) {
	noSchedule := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name   string
		mutate func(rc *nodev1.RuntimeClass)
		want   []string
	}{
		{"valid", func(*nodev1.RuntimeClass) {}, nil},
		{"no handler", func(rc *nodev1.RuntimeClass) { rc.Handler = "" }, []string{"FieldValueRequired handler"}},
		{"handler not a label", func(rc *nodev1.RuntimeClass) { rc.Handler = "run.sc" }, []string{"FieldValueInvalid handler"}},
		{"overhead", func(rc *nodev1.RuntimeClass) {
			rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
		}, nil},
		{"negative overhead", func(rc *nodev1.RuntimeClass) {
			rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1")}}
		}, []string{"FieldValueInvalid overhead.limits[memory]"}},
		{"overhead resource", func(rc *nodev1.RuntimeClass) {
			rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{"pods": resource.MustParse("1")}}
		}, []string{"FieldValueInvalid overhead.limits[pods]"}},
		{"scheduling", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "true"}, Tolerations: []corev1.Toleration{noSchedule}}
		}, nil},
		{"bad selector and duplicate toleration", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"a b": "c"}, Tolerations: []corev1.Toleration{noSchedule, noSchedule}}
		}, []string{"FieldValueDuplicate scheduling.tolerations[1]", "FieldValueInvalid scheduling.nodeSelector"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
			tt.mutate(rc)
			var got []string
			for _, e := range (RuntimeClassStrategy{}).Validate(context.Background(), rc) {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRuntimeClassHandlerImmutable(t *testing.T) {
	old := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	rc := old.DeepCopy()
	rc.Handler = "kata"
	errs := RuntimeClassStrategy{}.ValidateUpdate(context.Background(), rc, old)
	if len(errs) != 1 || errs[0].Field != "handler" || errs[0].Detail != "field is immutable" {
		t.Errorf("handler change: %v", errs)
	}
	rc.Handler = "runsc"
	rc.Scheduling = &nodev1.Scheduling{NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"}}
	if errs := (RuntimeClassStrategy{}).ValidateUpdate(context.Background(), rc, old); len(errs) != 0 {
		t.Errorf("scheduling change: %v", errs)
	}
	if w := (RuntimeClassStrategy{}).WarningsOnUpdate(context.Background(), rc, old); len(w) != 1 {
		t.Errorf("warnings = %q", w)
	}
}
