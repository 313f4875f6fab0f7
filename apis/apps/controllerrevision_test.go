package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func newRevision(data string) *appsv1.ControllerRevision {
	rev := &appsv1.ControllerRevision{ObjectMeta: meta("web-5d8f"), Revision: 2}
	if data != "" {
		rev.Data.Raw = []byte(data)
	}
	return rev
}

func TestValidateControllerRevision(t *testing.T) {
	tests := []struct {
		name string
		rev  *appsv1.ControllerRevision
		want []wantErr
	}{
		{"valid", newRevision(`{"spec":{"template":{}}}`), nil},
		{"empty object", newRevision(`{}`), nil},
		{"from object", &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &appsv1.DaemonSet{}}}, nil},
		{"no data", newRevision(""), []wantErr{req("data")}},
		{"null", newRevision("null"), []wantErr{req("data")}},
		{"array", newRevision("[1]"), []wantErr{req("data")}},
		{"not JSON", newRevision("{"), []wantErr{inv("data")}},
		{"negative revision", &appsv1.ControllerRevision{Revision: -1, Data: runtime.RawExtension{Raw: []byte("{}")}},
			[]wantErr{inv("revision")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ControllerRevisionStrategy{}.Validate(ctx, tt.rev), tt.want...)
		})
	}
	checkDetail(t, ControllerRevisionStrategy{}.Validate(ctx, newRevision("[1]")), "data", "data must be a valid JSON object")
}

func TestValidateControllerRevisionUpdate(t *testing.T) {
	old := newRevision(`{"a":1}`)
	tests := []struct {
		name string
		rev  *appsv1.ControllerRevision
		want []wantErr
	}{
		{"unchanged", newRevision(`{"a":1}`), nil},
		{"whitespace", newRevision(`{ "a" : 1 }`), nil},
		{"revision changes", &appsv1.ControllerRevision{Revision: 5, Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}, nil},
		{"data changes", newRevision(`{"a":2}`), []wantErr{inv("data")}},
		{"data dropped", newRevision(""), []wantErr{inv("data")}},
		{"negative revision", &appsv1.ControllerRevision{Revision: -1, Data: old.Data}, []wantErr{inv("revision")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ControllerRevisionStrategy{}.ValidateUpdate(ctx, tt.rev, old), tt.want...)
		})
	}
}
