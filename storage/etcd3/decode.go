package etcd3

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// decode decodes the stored bytes of key into into and sets its
// resourceVersion to rev. Bytes that do not decode (written by another
// program, a newer version, or corrupted) give ErrInvalidObject; a decoder
// that panics on them is contained, so bad data never takes the server down.
func (s *Store) decode(data []byte, into runtime.Object, rev int64, key string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = storage.NewError(storage.ErrInvalidObject, key, rev, fmt.Sprintf("decoder panic: %v", r))
		}
	}()
	obj, _, err := s.codec.Decode(data, nil, into)
	if err != nil {
		return storage.NewError(storage.ErrInvalidObject, key, rev, err.Error())
	}
	if obj != into {
		// A codec that returns another object than the one it was given
		// would leave into empty; refuse it rather than return nothing.
		return storage.NewError(storage.ErrInvalidObject, key, rev, fmt.Sprintf("decoded %T, want %T", obj, into))
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
