package handlers

import (
	"errors"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NewStatusError is a StatusError with the given code, reason and message.
func NewStatusError(code int, reason metav1.StatusReason, message string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: message,
		Details: &metav1.StatusDetails{},
	}}
}

// ErrorToStatus is the Status a client is told about err. Errors that are
// not API errors are internal errors: the client gets a generic message and
// the cause goes to the log.
func ErrorToStatus(err error, logger *slog.Logger) *metav1.Status {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Status == "" {
			s.Status = metav1.StatusFailure
		}
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		return &s
	}
	if logger != nil {
		logger.Error("internal error", "err", err)
	}
	s := apierrors.NewInternalError(err).Status()
	return &s
}

// MethodNotAllowed is kube's 405 for a method that no route of the
// resource takes, such as PATCH of namespaces/finalize.
func MethodNotAllowed() error {
	return NewStatusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
}

// MethodNotSupported is kube's 405 for a watch of a resource that can be
// listed but not watched: the one 405 that names the verb.
func MethodNotSupported(gr schema.GroupResource, verb string) error {
	return apierrors.NewMethodNotSupported(gr, verb)
}
