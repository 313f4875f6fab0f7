package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestValidateLimitRange(t *testing.T) {
	tests := []struct {
		name  string
		items []corev1.LimitRangeItem
		want  []wantErr
	}{
		{"container", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Min: resources("cpu", "100m"),
			Max: resources("cpu", "2"), Default: resources("cpu", "1"), DefaultRequest: resources("cpu", "500m")}}, nil},
		{"min above max", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Min: resources("cpu", "2"), Max: resources("cpu", "1")}},
			[]wantErr{inv("spec.limits[0].min[cpu]")}},
		{"default above max", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: resources("memory", "1Gi"),
			Default: resources("memory", "2Gi"), DefaultRequest: resources("memory", "3Gi")}},
			[]wantErr{inv("spec.limits[0].default[memory]"), inv("spec.limits[0].defaultRequest[memory]"), inv("spec.limits[0].defaultRequest[memory]")}},
		{"default request below min", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Min: resources("cpu", "1"),
			DefaultRequest: resources("cpu", "500m")}}, []wantErr{inv("spec.limits[0].defaultRequest[cpu]")}},
		{"pod defaults", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Default: resources("cpu", "1"),
			DefaultRequest: resources("cpu", "1")}}, []wantErr{forb("spec.limits[0].default"), forb("spec.limits[0].defaultRequest")}},
		{"duplicate type", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod}, {Type: corev1.LimitTypePod}},
			[]wantErr{duplicateAt("spec.limits[1].type")}},
		{"unknown type", []corev1.LimitRangeItem{{Type: "Node"}}, []wantErr{inv("spec.limits[0].type")}},
		{"claim without storage", []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim}},
			[]wantErr{req("spec.limits[0].limits")}},
		{"container storage", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: resources("storage", "1Gi")}},
			[]wantErr{inv("spec.limits[0].max[storage]")}},
		{"ratio below one", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: resources("cpu", "500m")}},
			[]wantErr{inv("spec.limits[0].maxLimitRequestRatio[cpu]")}},
		{"ratio above max/min", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Min: resources("cpu", "1"),
			Max: resources("cpu", "2"), MaxLimitRequestRatio: resources("cpu", "3")}}, []wantErr{inv("spec.limits[0].maxLimitRequestRatio[cpu]")}},
		{"hugepages must match", []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: resources("hugepages-2Mi", "4Mi"),
			DefaultRequest: resources("hugepages-2Mi", "2Mi")}}, []wantErr{inv("spec.limits[0].defaultRequest[hugepages-2Mi]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: tt.items}}
			checkErrs(t, LimitRangeStrategy{}.Validate(context.Background(), lr), tt.want...)
		})
	}
}

func TestDefaultLimitRange(t *testing.T) {
	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: resources("cpu", "2", "memory", "1Gi"), Min: resources("ephemeral-storage", "1Mi"),
			Default: resources("memory", "512Mi")},
		{Type: corev1.LimitTypePod, Max: resources("cpu", "4")},
	}}}
	LimitRangeStrategy{}.Default(lr)
	c := lr.Spec.Limits[0]
	want := map[string]string{"default.cpu": "2", "default.memory": "512Mi", "defaultRequest.cpu": "2",
		"defaultRequest.memory": "512Mi", "defaultRequest.ephemeral-storage": "1Mi"}
	got := map[string]string{}
	for n, q := range c.Default {
		got["default."+string(n)] = q.String()
	}
	for n, q := range c.DefaultRequest {
		got["defaultRequest."+string(n)] = q.String()
	}
	if len(got) != len(want) {
		t.Errorf("defaults = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if lr.Spec.Limits[1].Default != nil {
		t.Errorf("pod item defaulted: %+v", lr.Spec.Limits[1])
	}
	unnamed := &corev1.LimitRange{}
	LimitRangeStrategy{}.PrepareForCreate(context.Background(), unnamed)
	if unnamed.Name == "" {
		t.Error("a limit range without a name got none")
	}
}
