package storage

import (
	"errors"
	"fmt"
)

// The storage layer's errors. The API layer turns them into metav1.Status at
// one boundary (endpoints/handlers/errors.go); below it they are matched with
// errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrKeyExists = errors.New("key exists")
	// ErrConflict: the object changed since it was read, or a
	// resourceVersion precondition failed.
	ErrConflict = errors.New("conflict")
	// ErrExpired: the requested revision (or continue token) is compacted.
	ErrExpired = errors.New("resource version expired")
	// ErrTooLargeResourceVersion: the requested revision is in the future.
	ErrTooLargeResourceVersion = errors.New("too large resource version")
	// ErrInvalidContinue: a continue token that cannot be decoded.
	ErrInvalidContinue = errors.New("invalid continue token")
	// ErrPrecondition: a uid precondition failed.
	ErrPrecondition = errors.New("precondition failed")
	// ErrInvalidObject: the stored bytes could not be decoded.
	ErrInvalidObject = errors.New("invalid object")
	// ErrInvalidKey: a key that is malformed or outside the resource's
	// prefix. A bug above storage, never a user error.
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidResourceVersion: a resourceVersion (or
	// resourceVersionMatch) that cannot be parsed; a 400 for the user.
	ErrInvalidResourceVersion = errors.New("invalid resource version")
	// ErrUnavailable: the backend cannot answer now (etcd without a
	// leader: a cluster that lost its quorum) and may later. A write
	// refused for want of a leader did not happen; one that timed out
	// waiting to be committed may still happen, as after any timeout.
	ErrUnavailable = errors.New("storage unavailable")
)

// Error is a storage error about one key, matched with errors.Is against the
// sentinels above and carrying the detail kube puts in its messages.
type Error struct {
	Err             error  // one of the sentinels
	Key             string // the storage key
	ResourceVersion int64  // the revision involved, where one is
	Detail          string // human readable detail
	// Continue is set on an ErrExpired for a compacted continue token: a
	// token that resumes the list at the latest revision, which kube puts
	// in the 410 Status's metadata.continue.
	Continue string
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%v: %s (key %q)", e.Err, e.Detail, e.Key)
	}
	return fmt.Sprintf("%v (key %q)", e.Err, e.Key)
}

func (e *Error) Unwrap() error { return e.Err }

// NewError returns an *Error for key wrapping the sentinel err.
func NewError(err error, key string, rv int64, detail string) *Error {
	return &Error{Err: err, Key: key, ResourceVersion: rv, Detail: detail}
}
