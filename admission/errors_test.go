package admission

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TestAsStatus: a plugin's API error stands; any other error is kube's
// answer to an error that is not a Status: 500, no reason, its message.
func TestAsStatus(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no"))
	for _, c := range []struct {
		name    string
		err     error
		code    int32
		reason  metav1.StatusReason
		message string
	}{
		{"api error", forbidden, http.StatusForbidden, metav1.StatusReasonForbidden, `pods "p" is forbidden: no`},
		{"wrapped api error", fmt.Errorf("x: %w", forbidden), http.StatusForbidden, metav1.StatusReasonForbidden, `pods "p" is forbidden: no`},
		{"plain error", errors.New("invalid selector: [a b c]"), http.StatusInternalServerError, metav1.StatusReasonUnknown, "invalid selector: [a b c]"},
		{"aggregate of api errors", utilerrors.NewAggregate([]error{forbidden, errors.New("two")}), http.StatusInternalServerError, metav1.StatusReasonUnknown,
			`[pods "p" is forbidden: no, two]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var status apierrors.APIStatus
			if !errors.As(asStatus(c.err), &status) {
				t.Fatalf("%v is not a Status", asStatus(c.err))
			}
			s := status.Status()
			if s.Code != c.code || s.Reason != c.reason || s.Message != c.message || s.Status != metav1.StatusFailure {
				t.Errorf("got %d %q %q %q, want %d %q %q", s.Code, s.Reason, s.Message, s.Status, c.code, c.reason, c.message)
			}
		})
	}
}
