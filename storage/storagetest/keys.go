package storagetest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// unsafeKeys are keys no operation may accept: each could reach outside
// the resource's prefix, or name one key in two ways.
var unsafeKeys = []string{
	"",
	"/",
	"configmaps/ns/a",
	"/secrets/ns/a",
	"/configmapsx/ns/a",
	"/configmaps/../secrets/ns/a",
	"/configmaps/ns/../../secrets/a",
	"/configmaps/ns/..",
	"/configmaps/./ns/a",
	"/configmaps/ns/.",
	"/configmaps//a",
	"//configmaps/ns/a",
	"/configmaps/ns/a\x00b",
}

// RunTestKeySafety checks that every operation refuses unsafe keys with
// ErrInvalidKey and writes nothing.
func RunTestKeySafety(ctx context.Context, t *testing.T, s storage.Interface) {
	tryUpdate := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
	ops := map[string]func(k string) error{
		"Create": func(k string) error {
			return s.Create(ctx, k, configMap("ns", "a", nil), &corev1.ConfigMap{}, 0)
		},
		"Get": func(k string) error {
			return s.Get(ctx, k, storage.GetOptions{IgnoreNotFound: true}, &corev1.ConfigMap{})
		},
		"GetList": func(k string) error {
			return s.GetList(ctx, k, storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		},
		"GuaranteedUpdate": func(k string) error {
			return s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, true, nil, tryUpdate, nil)
		},
		"Delete": func(k string) error {
			return s.Delete(ctx, k, &corev1.ConfigMap{}, nil, nil, nil)
		},
		"Watch": func(k string) error {
			w, err := s.Watch(ctx, k, storage.ListOptions{Recursive: true})
			if err == nil {
				w.Stop()
			}
			return err
		},
		"Count": func(k string) error {
			_, err := s.Count(ctx, k)
			return err
		},
	}
	for name, op := range ops {
		for _, k := range unsafeKeys {
			expectErr(t, name+"("+k+")", op(k), storage.ErrInvalidKey)
		}
	}
}
