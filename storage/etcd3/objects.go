package etcd3

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// The resourceVersion of an object is never stored: it is the etcd
// revision that last modified the key, set on every object read.

// setResourceVersion sets obj's resourceVersion to rev ("" for 0).
func setResourceVersion(obj runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("setting resourceVersion: %w", err)
	}
	v := ""
	if rev > 0 {
		v = strconv.FormatInt(rev, 10)
	}
	m.SetResourceVersion(v)
	return nil
}

// clearForStorage removes the fields that are derived on read, not stored.
func clearForStorage(obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("preparing object for storage: %w", err)
	}
	m.SetResourceVersion("")
	m.SetSelfLink("")
	return nil
}

// objectResourceVersion returns the resourceVersion of obj, 0 if unset.
func objectResourceVersion(obj runtime.Object) (int64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, fmt.Errorf("reading resourceVersion: %w", err)
	}
	rv, err := parseResourceVersion(m.GetResourceVersion())
	return int64(rv), err
}

// parseResourceVersion parses a resourceVersion: "" and "0" are 0.
func parseResourceVersion(rv string) (uint64, error) { return storage.ParseResourceVersion(rv) }

// setListMeta sets the list's resourceVersion, continue token and
// remaining item count.
func setListMeta(list runtime.Object, rev int64, continueToken string, remaining *int64) error {
	m, err := meta.ListAccessor(list)
	if err != nil {
		return fmt.Errorf("setting list metadata: %w", err)
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	m.SetContinue(continueToken)
	m.SetRemainingItemCount(remaining)
	return nil
}
