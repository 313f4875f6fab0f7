package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/storage"
)

// RunTestDelete checks Delete: the deleted object and its revision,
// not found, preconditions, validateDeletion, stale cached objects and
// concurrent deletes.
func RunTestDelete(ctx context.Context, t *testing.T, s storage.Interface) {
	t.Run("delete", func(t *testing.T) {
		stored := create(ctx, t, s, configMap("delete", "a", nil, "k", "v"))
		out := remove(ctx, t, s, "delete", "a")
		if out.Name != "a" || out.Data["k"] != "v" {
			t.Fatalf("Delete returned %+v", out)
		}
		// The deleted object carries the revision of the deletion.
		if rvOf(t, out.ResourceVersion) <= rvOf(t, stored.ResourceVersion) {
			t.Fatalf("deleted object has resourceVersion %s, stored had %s", out.ResourceVersion, stored.ResourceVersion)
		}
		err := s.Get(ctx, key("delete", "a"), storage.GetOptions{}, &corev1.ConfigMap{})
		expectErr(t, "Get after Delete", err, storage.ErrNotFound)
	})
	t.Run("not found", func(t *testing.T) {
		err := s.Delete(ctx, key("delete", "missing"), &corev1.ConfigMap{}, nil, nil, nil)
		expectErr(t, "Delete", err, storage.ErrNotFound)
	})
	t.Run("preconditions", func(t *testing.T) { testDeletePreconditions(ctx, t, s) })
	t.Run("validateDeletion", func(t *testing.T) {
		create(ctx, t, s, configMap("delete-validate", "a", nil))
		refuse := errors.New("refused")
		err := s.Delete(ctx, key("delete-validate", "a"), &corev1.ConfigMap{}, nil,
			func(context.Context, runtime.Object) error { return refuse }, nil)
		expectErr(t, "Delete", err, refuse)
		get(ctx, t, s, "delete-validate", "a") // still there
	})
	t.Run("stale cached object", func(t *testing.T) { testDeleteStaleCache(ctx, t, s) })
	t.Run("concurrent deletes", func(t *testing.T) { testConcurrentDeletes(ctx, t, s) })
}

func testDeletePreconditions(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := create(ctx, t, s, configMap("delete-pre", "a", nil))
	wrongUID, wrongRV := types.UID("other"), "1"
	err := s.Delete(ctx, key("delete-pre", "a"), &corev1.ConfigMap{}, &storage.Preconditions{UID: &wrongUID}, nil, nil)
	expectErr(t, "wrong uid", err, storage.ErrPrecondition)
	err = s.Delete(ctx, key("delete-pre", "a"), &corev1.ConfigMap{}, &storage.Preconditions{ResourceVersion: &wrongRV}, nil, nil)
	expectErr(t, "wrong resourceVersion", err, storage.ErrConflict)
	get(ctx, t, s, "delete-pre", "a")

	uid, rv := stored.UID, stored.ResourceVersion
	if err := s.Delete(ctx, key("delete-pre", "a"), &corev1.ConfigMap{}, &storage.Preconditions{UID: &uid, ResourceVersion: &rv}, nil, nil); err != nil {
		t.Fatalf("matching preconditions: %v", err)
	}
}

// testDeleteStaleCache deletes with an outdated cached copy that
// validateDeletion refuses: the current object, which it accepts, must be
// deleted, and the object returned must be the current one.
func testDeleteStaleCache(ctx context.Context, t *testing.T, s storage.Interface) {
	stale := create(ctx, t, s, configMap("delete-stale", "a", map[string]string{"protected": "true"}))
	update(ctx, t, s, "delete-stale", "a", func(cm *corev1.ConfigMap) { cm.Labels = nil })
	out := &corev1.ConfigMap{}
	err := s.Delete(ctx, key("delete-stale", "a"), out, nil, func(_ context.Context, obj runtime.Object) error {
		if obj.(*corev1.ConfigMap).Labels["protected"] == "true" {
			return errors.New("protected")
		}
		return nil
	}, stale.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if out.Labels["protected"] != "" {
		t.Fatalf("Delete returned the stale object %+v", out)
	}
}

func testConcurrentDeletes(ctx context.Context, t *testing.T, s storage.Interface) {
	create(ctx, t, s, configMap("delete-race", "a", nil))
	const deleters = 5
	errs := make(chan error, deleters)
	var wg sync.WaitGroup
	for range deleters {
		wg.Go(func() { errs <- s.Delete(ctx, key("delete-race", "a"), &corev1.ConfigMap{}, nil, nil, nil) })
	}
	wg.Wait()
	close(errs)
	succeeded := 0
	for err := range errs {
		switch {
		case err == nil:
			succeeded++
		case !errors.Is(err, storage.ErrNotFound):
			t.Fatalf("concurrent Delete: %v", err)
		}
	}
	if succeeded != 1 {
		t.Fatalf("%d deletes succeeded, want 1", succeeded)
	}
}
