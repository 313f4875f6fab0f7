package registry

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/storage"
)

// interpretError is the one place where storage errors become API errors.
// Errors that are already API errors pass through unchanged.
func (s *Store) interpretError(err error, name string) error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	var serr *storage.Error
	detail := ""
	if errors.As(err, &serr) {
		detail = serr.Detail
	}
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(s.resource, name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(s.resource, name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(s.resource, name, errors.New(conflictMessage))
	case errors.Is(err, storage.ErrPrecondition):
		return apierrors.NewConflict(s.resource, name, errors.New(detail))
	case errors.Is(err, storage.ErrExpired):
		return expiredError(serr)
	case errors.Is(err, storage.ErrTooLargeResourceVersion):
		return tooLargeError(serr)
	case errors.Is(err, storage.ErrInvalidContinue):
		return apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %s", detail))
	case errors.Is(err, storage.ErrInvalidKey) && strings.ContainsRune(name, 0):
		// No object can have such a name (validation refuses it), so it
		// is not found, as kube answers; the storage key is not shown.
		return apierrors.NewNotFound(s.resource, name)
	case errors.Is(err, storage.ErrInvalidKey):
		return apierrors.NewBadRequest("invalid key: " + detail)
	case errors.Is(err, storage.ErrInvalidResourceVersion):
		return apierrors.NewBadRequest(err.Error())
	case errors.Is(err, storage.ErrUnavailable):
		return unavailableError(detail)
	}
	return apierrors.NewInternalError(err)
}

// conflictMessage is the message users know from kube's optimistic
// concurrency failures.
const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// expiredError is 410 Expired; for a compacted continue token it carries a
// fresh token to restart the list from, as kube's does.
func expiredError(serr *storage.Error) error {
	detail := "too old resource version"
	if serr != nil && serr.Detail != "" {
		detail = serr.Detail
	}
	err := apierrors.NewResourceExpired(detail)
	if serr != nil && serr.Continue != "" {
		err.ErrStatus.ListMeta.Continue = serr.Continue
	}
	return err
}

// tooLargeError is kube's answer to a resourceVersion from the future: a
// 504 Timeout whose cause tells clients to retry.
func tooLargeError(serr *storage.Error) error {
	msg := "Too large resource version"
	if serr != nil && serr.Detail != "" {
		msg = serr.Detail
	}
	err := apierrors.NewTimeoutError(msg, 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

// unavailableRetrySeconds is the Retry-After of a 503 for storage that
// cannot answer: etcd elects a leader within a few election timeouts
// (1 s each by default) once a quorum of its members is back.
const unavailableRetrySeconds = 1

// unavailableError is a 503 ServiceUnavailable with Retry-After, which
// client-go's retrying clients (and kubectl) wait and send again: etcd has
// no leader, and kube's answer (a 500, or the request held until its
// timeout, then a 504) would either fail them or hold them for a minute.
func unavailableError(detail string) error {
	err := apierrors.NewServiceUnavailable("storage is unavailable: " + detail)
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: unavailableRetrySeconds}
	return err
}
