package proxy

import (
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrorResponder writes the answer for a request the proxy could not
// complete.
type ErrorResponder interface {
	Error(w http.ResponseWriter, r *http.Request, err error)
}

// ErrorResponderFunc adapts a function to ErrorResponder.
type ErrorResponderFunc func(w http.ResponseWriter, r *http.Request, err error)

// Error implements ErrorResponder.
func (f ErrorResponderFunc) Error(w http.ResponseWriter, r *http.Request, err error) { f(w, r, err) }

// StatusResponder writes errors as kube's API handlers do: a metav1.Status
// in JSON, with the error's code and reason when it is an API status and
// 500 otherwise.
type StatusResponder struct{}

// Error implements ErrorResponder.
func (StatusResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	WriteStatus(w, StatusOf(err))
}

// StatusOf is err as kube puts an error on the wire.
func StatusOf(err error) *metav1.Status {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return &s
	}
	return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}
}

// WriteStatus writes s as JSON with its code.
func WriteStatus(w http.ResponseWriter, s *metav1.Status) {
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, err := json.Marshal(s)
	if err != nil {
		http.Error(w, s.Message, int(s.Code))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(append(body, '\n'))
}

// errorLog routes net/http/httputil's log lines to logger at debug level:
// they are about one request (a client that went away), not the server.
func errorLog(logger *slog.Logger) *log.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
}
