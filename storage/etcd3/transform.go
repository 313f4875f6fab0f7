package etcd3

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// The store's values pass through its transformer (encryption at rest)
// between the codec and etcd, with the full etcd key as authenticated
// data, as kube's do: a value moved to another key does not decrypt.

// writeError is a failed encryption. Its message is the transformer's
// alone, which the API layer shows in kube's 500 ("Internal error
// occurred: ...").
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// corruptObjectError is a stored value that does not decrypt or does not
// decode, with the message of kube's corrupt object StorageError (code 7),
// which kube's reads answer with a 500.
type corruptObjectError struct {
	key string // the storage key of a get, the etcd key in a list
	// undecodable: the value decrypted but did not decode, at revision rev
	// (kube names the revision only for those).
	undecodable bool
	rev         int64
	err         error
}

func (e *corruptObjectError) Error() string {
	what := "data from the storage is not transformable"
	if e.undecodable {
		what = "object not decodable"
	}
	return fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, "+
		"AdditionalErrorMsg: %s revision=%d: %v", e.key, what, e.rev, e.err)
}

// Unwrap gives the cause of a value that does not decrypt, and
// storage.ErrInvalidObject for one that does not decode: not its cause,
// which may be an API error (a conversion webhook's) that would otherwise
// stand for the whole error, where kube answers a corrupt object's 500.
func (e *corruptObjectError) Unwrap() error {
	if e.undecodable {
		return storage.ErrInvalidObject
	}
	return e.err
}

// fromStorage decrypts a stored value of etcdKey; key names it in errors.
func (s *Store) fromStorage(ctx context.Context, stored []byte, etcdKey, key string) ([]byte, bool, error) {
	data, stale, err := s.transformer.TransformFromStorage(ctx, stored, []byte(etcdKey))
	if err != nil {
		return nil, false, &corruptObjectError{key: key, err: err}
	}
	return data, stale, nil
}

// toStorage encrypts the encoded object to be stored at etcdKey.
func (s *Store) toStorage(ctx context.Context, data []byte, etcdKey string) ([]byte, error) {
	out, err := s.transformer.TransformToStorage(ctx, data, []byte(etcdKey))
	if err != nil {
		return nil, &writeError{err: err}
	}
	return out, nil
}

// decodeStored decrypts and decodes a value read from etcd (a watch event
// or the initial state of a watch) into a new object.
func (s *Store) decodeStored(ctx context.Context, stored []byte, rev int64, etcdKey string) (runtime.Object, error) {
	data, _, err := s.fromStorage(ctx, stored, etcdKey, etcdKey)
	if err != nil {
		return nil, err
	}
	return s.decodeNew(data, rev, etcdKey)
}

// maxListErrors is how many undecryptable items a list reports before it
// gives up, as kube.
const maxListErrors = 100

// listErrors collects the items of a list that do not decrypt or decode:
// kube reads on and answers with all of them (up to maxListErrors) in one
// 500, serving none of the list.
type listErrors struct{ errs []*corruptObjectError }

// add records err and reports whether the list must stop.
func (l *listErrors) add(err *corruptObjectError) bool {
	l.errs = append(l.errs, err)
	return len(l.errs) >= maxListErrors
}

// status is kube's StorageReadError for the collected errors, nil if none.
func (l *listErrors) status(s *Store, tooMany bool) error {
	if len(l.errs) == 0 {
		return nil
	}
	causes := make([]metav1.StatusCause, 0, len(l.errs)+1)
	for _, e := range l.errs {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: e.key, Message: e.Error()})
	}
	if tooMany {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated"})
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "failed to read one or more %s from the storage: %v", s.groupResource.String(), l.errs[0])
	if len(l.errs) > 1 {
		fmt.Fprintf(&msg, " (and %d more)", len(l.errs)-1)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonStoreReadError,
		Details: &metav1.StatusDetails{Group: s.groupResource.Group, Kind: s.groupResource.Resource, Name: "list", Causes: causes},
		Message: msg.String(),
	}}
}
