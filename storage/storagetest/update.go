package storagetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/storage"
)

// RunTestGuaranteedUpdate checks GuaranteedUpdate: updates, the no-op
// shortcut, create-on-update, preconditions, errors of tryUpdate, stale
// cached objects and concurrent writers.
func RunTestGuaranteedUpdate(ctx context.Context, t *testing.T, s storage.Interface) {
	t.Run("update", func(t *testing.T) { testUpdate(ctx, t, s) })
	t.Run("no-op update writes nothing", func(t *testing.T) {
		stored := create(ctx, t, s, configMap("update-noop", "a", nil, "k", "v"))
		out := update(ctx, t, s, "update-noop", "a", func(*corev1.ConfigMap) {})
		if out.ResourceVersion != stored.ResourceVersion {
			t.Fatalf("no-op update moved resourceVersion %s -> %s", stored.ResourceVersion, out.ResourceVersion)
		}
	})
	t.Run("not found", func(t *testing.T) {
		err := s.GuaranteedUpdate(ctx, key("update-missing", "a"), &corev1.ConfigMap{}, false, nil, identity, nil)
		expectErr(t, "GuaranteedUpdate", err, storage.ErrNotFound)
	})
	t.Run("create on update", func(t *testing.T) { testCreateOnUpdate(ctx, t, s) })
	t.Run("preconditions", func(t *testing.T) { testUpdatePreconditions(ctx, t, s) })
	t.Run("tryUpdate error", func(t *testing.T) {
		create(ctx, t, s, configMap("update-err", "a", nil))
		boom := errors.New("boom")
		err := s.GuaranteedUpdate(ctx, key("update-err", "a"), &corev1.ConfigMap{}, false, nil,
			func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) { return nil, nil, boom }, nil)
		expectErr(t, "GuaranteedUpdate", err, boom)
	})
	t.Run("stale cached object", func(t *testing.T) { testUpdateStaleCache(ctx, t, s) })
	t.Run("concurrent writers", func(t *testing.T) { testConcurrentUpdates(ctx, t, s) })
}

func identity(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
	return in, nil, nil
}

func testUpdate(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := create(ctx, t, s, configMap("update", "a", nil, "k", "v1"))
	var seen storage.ResponseMeta
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(ctx, key("update", "a"), out, false, nil,
		func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			seen = res
			cm := in.(*corev1.ConfigMap)
			if cm.ResourceVersion != stored.ResourceVersion || cm.Data["k"] != "v1" {
				t.Errorf("tryUpdate got %+v, want the stored object", cm)
			}
			cm.Data["k"] = "v2"
			return cm, nil, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen.ResourceVersion != rvOf(t, stored.ResourceVersion) {
		t.Errorf("ResponseMeta.ResourceVersion = %d, want %s", seen.ResourceVersion, stored.ResourceVersion)
	}
	if out.Data["k"] != "v2" || rvOf(t, out.ResourceVersion) <= rvOf(t, stored.ResourceVersion) {
		t.Fatalf("update returned %+v", out)
	}
	if got := get(ctx, t, s, "update", "a"); got.ResourceVersion != out.ResourceVersion || got.Data["k"] != "v2" {
		t.Fatalf("Get after update = %+v, want %+v", got, out)
	}
}

func testCreateOnUpdate(ctx context.Context, t *testing.T, s storage.Interface) {
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(ctx, key("update-create", "a"), out, true, nil,
		func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			cm := in.(*corev1.ConfigMap)
			if cm.Name != "" || res.ResourceVersion != 0 {
				t.Errorf("tryUpdate of a missing key got %+v, %+v", cm, res)
			}
			return configMap("update-create", "a", nil, "k", "v"), nil, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(ctx, t, s, "update-create", "a"); got.Data["k"] != "v" || got.ResourceVersion != out.ResourceVersion {
		t.Fatalf("Get = %+v, want %+v", got, out)
	}
}

func testUpdatePreconditions(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := create(ctx, t, s, configMap("update-pre", "a", nil))
	try := func(p *storage.Preconditions) error {
		return s.GuaranteedUpdate(ctx, key("update-pre", "a"), &corev1.ConfigMap{}, false, p,
			func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				cm := in.(*corev1.ConfigMap)
				cm.Data = map[string]string{"n": cm.ResourceVersion}
				return cm, nil, nil
			}, nil)
	}
	wrongUID, wrongRV := types.UID("other"), "1"
	expectErr(t, "wrong uid", try(&storage.Preconditions{UID: &wrongUID}), storage.ErrPrecondition)
	expectErr(t, "wrong resourceVersion", try(&storage.Preconditions{ResourceVersion: &wrongRV}), storage.ErrConflict)
	uid, rv := stored.UID, stored.ResourceVersion
	if err := try(&storage.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
		t.Fatalf("matching preconditions: %v", err)
	}
}

// testUpdateStaleCache passes an outdated copy as cachedExisting: the
// update must apply to the current object, and a precondition that only
// the stale copy fails must not fail the update.
func testUpdateStaleCache(ctx context.Context, t *testing.T, s storage.Interface) {
	stale := create(ctx, t, s, configMap("update-stale", "a", nil, "k", "v1"))
	current := setData(ctx, t, s, "update-stale", "a", "k", "v2")
	rv := current.ResourceVersion
	calls := 0
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(ctx, key("update-stale", "a"), out, false, &storage.Preconditions{ResourceVersion: &rv},
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			calls++
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Data["seen"] = cm.Data["k"]
			return cm, nil, nil
		}, stale.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if out.Data["seen"] != "v2" || out.Data["k"] != "v2" {
		t.Fatalf("update from a stale cache gave %v (tryUpdate called %d times)", out.Data, calls)
	}
}

func testConcurrentUpdates(ctx context.Context, t *testing.T, s storage.Interface) {
	const writers, increments = 8, 5
	create(ctx, t, s, configMap("update-race", "a", nil, "n", "0"))
	var wg sync.WaitGroup
	errs := make(chan error, writers*increments)
	for range writers {
		wg.Go(func() {
			for range increments {
				errs <- s.GuaranteedUpdate(ctx, key("update-race", "a"), &corev1.ConfigMap{}, false, nil,
					func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
						cm := in.(*corev1.ConfigMap)
						n, _ := strconv.Atoi(cm.Data["n"])
						cm.Data["n"] = strconv.Itoa(n + 1)
						return cm, nil, nil
					}, nil)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := get(ctx, t, s, "update-race", "a").Data["n"]; got != strconv.Itoa(writers*increments) {
		t.Fatalf("counter = %s after %d increments: an update was lost", got, writers*increments)
	}
}
