package apiregistration

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestSetCondition(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	cond := func(s apiregv1.ConditionStatus, reason string, at metav1.Time) apiregv1.APIServiceCondition {
		return apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: s, Reason: reason, Message: reason, LastTransitionTime: at}
	}
	cases := []struct {
		name      string
		old       []apiregv1.APIServiceCondition
		set       apiregv1.APIServiceCondition
		want      apiregv1.APIServiceCondition
		available bool
	}{
		{"added", nil, cond(apiregv1.ConditionFalse, "ServiceNotFound", t1), cond(apiregv1.ConditionFalse, "ServiceNotFound", t1), false},
		{"same status keeps the time", []apiregv1.APIServiceCondition{cond(apiregv1.ConditionFalse, "ServiceNotFound", t0)},
			cond(apiregv1.ConditionFalse, "FailedDiscoveryCheck", t1), cond(apiregv1.ConditionFalse, "FailedDiscoveryCheck", t0), false},
		{"a transition takes the new time", []apiregv1.APIServiceCondition{cond(apiregv1.ConditionFalse, "ServiceNotFound", t0)},
			cond(apiregv1.ConditionTrue, "Passed", t1), cond(apiregv1.ConditionTrue, "Passed", t1), true},
	}
	for _, tc := range cases {
		svc := &apiregv1.APIService{Status: apiregv1.APIServiceStatus{Conditions: tc.old}}
		SetCondition(svc, tc.set)
		if len(svc.Status.Conditions) != 1 || svc.Status.Conditions[0] != tc.want || IsAvailable(svc) != tc.available {
			t.Errorf("%s: %+v, available %v", tc.name, svc.Status.Conditions, IsAvailable(svc))
		}
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{"v1.": true, "v1.apps": true, "v1alpha1.wardle.example.com": true, "v1/x": false, "..": false} {
		if msgs := (Strategy{}).ValidateName(name, false); (len(msgs) == 0) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok %v", name, msgs, ok)
		}
	}
}
