package etcd3

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// decode decodes the stored bytes of key into into and sets its
// resourceVersion to rev. Bytes that do not decode (written by another
// program, at a version this server does not know, or corrupted) are kube's
// corrupt object error, which is an ErrInvalidObject; a decoder that panics
// on them is contained, so bad data never takes the server down.
func (s *Store) decode(data []byte, into runtime.Object, rev int64, key string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &corruptObjectError{key: key, undecodable: true, rev: rev, err: fmt.Errorf("decoder panic: %v", r)}
		}
	}()
	obj, _, err := s.codec.Decode(data, nil, into)
	if err != nil {
		return &corruptObjectError{key: key, undecodable: true, rev: rev, err: err}
	}
	if obj != into {
		// A codec that returns another object than the one it was given
		// would leave into empty; refuse it rather than return nothing.
		return &corruptObjectError{key: key, undecodable: true, rev: rev, err: fmt.Errorf("decoded %T, want %T", obj, into)}
	}
	return setResourceVersion(into, rev)
}

// decodeNew decodes data into a new object of the store's type.
func (s *Store) decodeNew(data []byte, rev int64, key string) (runtime.Object, error) {
	obj := s.newFunc()
	if err := s.decode(data, obj, rev, key); err != nil {
		return nil, err
	}
	return obj, nil
}
