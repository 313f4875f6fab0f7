package storageversionmigrator

import (
	"errors"
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRetriable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "list", 1), true},
		{"timeout", apierrors.NewTimeoutError("took too long", 1), true},
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"unavailable", apierrors.NewServiceUnavailable("starting"), true},
		{"forbidden", apierrors.NewForbidden(gr, "a", errors.New("no")), false},
		{"invalid", apierrors.NewBadRequest("bad"), false},
		{"not an API error", errors.New("decoding"), false},
	} {
		if got := retriable(tc.err); got != tc.want {
			t.Errorf("%s: retriable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFinished(t *testing.T) {
	cond := func(typ svmv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: s}
	}
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{"new", nil, false},
		{"running", []metav1.Condition{cond(svmv1.MigrationRunning, metav1.ConditionTrue)}, false},
		{"succeeded", []metav1.Condition{cond(svmv1.MigrationRunning, metav1.ConditionFalse), cond(svmv1.MigrationSucceeded, metav1.ConditionTrue)}, true},
		{"failed", []metav1.Condition{cond(svmv1.MigrationFailed, metav1.ConditionTrue)}, true},
		{"succeeded false", []metav1.Condition{cond(svmv1.MigrationSucceeded, metav1.ConditionFalse)}, false},
	} {
		svm := &svmv1.StorageVersionMigration{Status: svmv1.StorageVersionMigrationStatus{Conditions: tc.conds}}
		if got := finished(svm); got != tc.want {
			t.Errorf("%s: finished = %v, want %v", tc.name, got, tc.want)
		}
	}
}
