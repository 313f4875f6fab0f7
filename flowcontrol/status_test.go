package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWrittenConditionsPending(t *testing.T) {
	found := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found", Message: "m"}
	notFound := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound", Message: "m"}
	later := found
	later.LastTransitionTime = metav1.Unix(100, 0)
	written := writtenConditions{"probes": {name: "probes", resourceVersion: "5", condition: found}}
	for _, tc := range []struct {
		what    string
		u       danglingUpdate
		pending bool
	}{
		{"same condition over the same version", danglingUpdate{name: "probes", resourceVersion: "5", condition: found}, true},
		{"same condition, another transition time", danglingUpdate{name: "probes", resourceVersion: "5", condition: later}, true},
		{"the object changed since", danglingUpdate{name: "probes", resourceVersion: "7", condition: found}, false},
		{"another condition", danglingUpdate{name: "probes", resourceVersion: "5", condition: notFound}, false},
		{"another FlowSchema", danglingUpdate{name: "exempt", resourceVersion: "5", condition: found}, false},
	} {
		if got := written.pending(tc.u); got != tc.pending {
			t.Errorf("%s: pending = %v, want %v", tc.what, got, tc.pending)
		}
	}
	written.prune([]*flowcontrolv1.FlowSchema{{ObjectMeta: metav1.ObjectMeta{Name: "exempt"}}})
	if _, ok := written["probes"]; ok {
		t.Error("a FlowSchema gone is still remembered")
	}
}
