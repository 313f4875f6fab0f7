package registry

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// sharedGetter is a storage that can answer a read with an object only
// serializers read, prepared (defaulted) as the reader asks (the watch
// cache).
type sharedGetter interface {
	GetShared(ctx context.Context, key string, opts storage.GetOptions, prepareID reflect.Type, prepare func(runtime.Object)) (runtime.Object, error)
}

var _ rest.ResponseGetter = (*Store)(nil)

// GetForResponse reads name as Get does, into an object that may be
// shared, for the GET handler to write.
func (s *Store) GetForResponse(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	sg, ok := s.storage.(sharedGetter)
	if !ok {
		return s.Get(ctx, name, opts)
	}
	key, err := s.objectKey(ctx, name)
	if err != nil {
		return nil, err
	}
	var prepare func(runtime.Object)
	if d, ok := s.strategy.(Defaulter); ok {
		prepare = d.Default
	}
	obj, err := sg.GetShared(ctx, key, storage.GetOptions{ResourceVersion: opts.ResourceVersion}, reflect.TypeOf(s.strategy), prepare)
	if err != nil {
		return nil, s.interpretError(err, name)
	}
	return obj, nil
}
