package registry

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
)

// TestInterpretError: each storage error becomes kube's Status (code,
// reason, message), wrapped or not, and no message shows the storage key.
func TestInterpretError(t *testing.T) {
	s := &Store{resource: schema.GroupResource{Resource: "configmaps"}}
	const key = "/registry/configmaps/ns/x"
	serr := func(err error, detail string) error { return storage.NewError(err, key, 7, detail) }
	for _, tc := range []struct {
		name    string
		err     error
		objName string
		code    int32
		reason  metav1.StatusReason
		message string
	}{
		{"not found", serr(storage.ErrNotFound, ""), "x", http.StatusNotFound, metav1.StatusReasonNotFound,
			`configmaps "x" not found`},
		{"wrapped not found", fmt.Errorf("get: %w", serr(storage.ErrNotFound, "")), "x", http.StatusNotFound, metav1.StatusReasonNotFound,
			`configmaps "x" not found`},
		{"exists", serr(storage.ErrKeyExists, ""), "x", http.StatusConflict, metav1.StatusReasonAlreadyExists,
			`configmaps "x" already exists`},
		{"conflict", serr(storage.ErrConflict, "revision 6"), "x", http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again`},
		{"uid precondition", serr(storage.ErrPrecondition, "Precondition failed: UID in precondition: a, UID in object meta: b"), "x",
			http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on configmaps "x": Precondition failed: UID in precondition: a, UID in object meta: b`},
		{"expired", serr(storage.ErrExpired, "The resourceVersion for the provided list is too old."), "", http.StatusGone, metav1.StatusReasonExpired,
			"The resourceVersion for the provided list is too old."},
		{"expired, no detail", storage.ErrExpired, "", http.StatusGone, metav1.StatusReasonExpired, "too old resource version"},
		{"too large", serr(storage.ErrTooLargeResourceVersion, "Too large resource version: 9, current: 7"), "", http.StatusGatewayTimeout,
			metav1.StatusReasonTimeout, "Timeout: Too large resource version: 9, current: 7"},
		{"bad continue", serr(storage.ErrInvalidContinue, "not base64"), "", http.StatusBadRequest, metav1.StatusReasonBadRequest,
			"invalid continue token: not base64"},
		{"NUL in the name", serr(storage.ErrInvalidKey, "control byte"), "a\x00b", http.StatusNotFound, metav1.StatusReasonNotFound,
			`configmaps "a\x00b" not found`},
		{"bad key", serr(storage.ErrInvalidKey, "outside the prefix"), "x", http.StatusBadRequest, metav1.StatusReasonBadRequest,
			"invalid key: outside the prefix"},
		{"bad resource version", fmt.Errorf("%w: unknown resourceVersionMatch %q", storage.ErrInvalidResourceVersion, "Newest"), "",
			http.StatusBadRequest, metav1.StatusReasonBadRequest, `invalid resource version: unknown resourceVersionMatch "Newest"`},
		{"anything else", errors.New("etcd is down"), "x", http.StatusInternalServerError, metav1.StatusReasonInternalError,
			"Internal error occurred: etcd is down"},
		{"an API error passes", apierrors.NewForbidden(s.resource, "x", errors.New("no")), "x", http.StatusForbidden,
			metav1.StatusReasonForbidden, `configmaps "x" is forbidden: no`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var status apierrors.APIStatus
			if !errors.As(s.interpretError(tc.err, tc.objName), &status) {
				t.Fatalf("%v: not an API error", s.interpretError(tc.err, tc.objName))
			}
			st := status.Status()
			if st.Code != tc.code || st.Reason != tc.reason || st.Message != tc.message {
				t.Errorf("got %d %s %q, want %d %s %q", st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.message)
			}
			if tc.code != http.StatusBadRequest && strings.Contains(st.Message, "/registry/") {
				t.Errorf("the message shows the storage key: %q", st.Message)
			}
		})
	}
	if s.interpretError(nil, "x") != nil {
		t.Error("no error became one")
	}
}

// TestInterpretErrorDetails: the 410 of a compacted continue token carries
// the token to restart from; the 504 of a future resourceVersion tells
// clients to retry, with kube's cause.
func TestInterpretErrorDetails(t *testing.T) {
	s := &Store{resource: schema.GroupResource{Resource: "configmaps"}}
	expired := &storage.Error{Err: storage.ErrExpired, Detail: "too old", Continue: "fresh"}
	var st apierrors.APIStatus
	if !errors.As(s.interpretError(expired, ""), &st) || st.Status().Continue != "fresh" {
		t.Errorf("expired continue: %+v", st)
	}
	if !errors.As(s.interpretError(storage.ErrTooLargeResourceVersion, ""), &st) {
		t.Fatal("too large: not an API error")
	}
	d := st.Status().Details
	if d == nil || d.RetryAfterSeconds != 1 || len(d.Causes) != 1 || d.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge ||
		d.Causes[0].Message != "Too large resource version" {
		t.Errorf("too large details: %+v", d)
	}
}

// TestGenerateName: kube's five random characters after the base, the
// base cut so that the name fits 63 characters.
func TestGenerateName(t *testing.T) {
	for _, base := range []string{"web-", "", strings.Repeat("a", 58), strings.Repeat("b", 100)} {
		got := generateName(base)
		want := base[:min(len(base), 58)]
		if !strings.HasPrefix(got, want) || len(got) != len(want)+generatedSuffixLength {
			t.Errorf("generateName(%q) = %q, want %q and %d characters", base, got, want, generatedSuffixLength)
		}
	}
	if generateName("x-") == generateName("x-") {
		t.Error("two generated names are the same")
	}
}
