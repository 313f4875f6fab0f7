package storagetest

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/storage"
)

// RunTestCreate checks Create: the stored object comes back with a
// resourceVersion, a taken key is refused, a set resourceVersion is
// refused, and a TTL makes the object go away.
func RunTestCreate(ctx context.Context, t *testing.T, s storage.Interface) {
	t.Run("returns the stored object", func(t *testing.T) {
		in := configMap("create-basic", "a", map[string]string{"x": "y"}, "k", "v")
		in.SelfLink = "/api/v1/whatever"
		before := currentRV(ctx, t, s)
		out := create(ctx, t, s, in)
		if out.Name != "a" || out.Data["k"] != "v" || out.Labels["x"] != "y" {
			t.Fatalf("Create returned %+v", out)
		}
		if rv := rvOf(t, out.ResourceVersion); rv <= before {
			t.Fatalf("resourceVersion %d not after %d", rv, before)
		}
		if out.SelfLink != "" {
			t.Errorf("selfLink %q was stored", out.SelfLink)
		}
		got := get(ctx, t, s, "create-basic", "a")
		if got.ResourceVersion != out.ResourceVersion || got.Data["k"] != "v" {
			t.Fatalf("Get = %+v, want %+v", got, out)
		}
	})
	t.Run("key exists", func(t *testing.T) {
		create(ctx, t, s, configMap("create-exists", "a", nil))
		err := s.Create(ctx, key("create-exists", "a"), configMap("create-exists", "a", nil), &corev1.ConfigMap{}, 0)
		expectErr(t, "second Create", err, storage.ErrKeyExists)
	})
	t.Run("resourceVersion set", func(t *testing.T) {
		in := configMap("create-rv", "a", nil)
		in.ResourceVersion = "5"
		if err := s.Create(ctx, key("create-rv", "a"), in, &corev1.ConfigMap{}, 0); err == nil {
			t.Fatal("Create with a resourceVersion succeeded")
		}
	})
	t.Run("ttl", func(t *testing.T) {
		if err := s.Create(ctx, key("create-ttl", "a"), configMap("create-ttl", "a", nil), &corev1.ConfigMap{}, 1); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := s.Get(ctx, key("create-ttl", "a"), storage.GetOptions{}, &corev1.ConfigMap{})
			if errors.Is(err, storage.ErrNotFound) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatal("object with a TTL of 1s still there after 20s")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// RunTestGet checks Get: not found, IgnoreNotFound, and the
// resourceVersion lower bound.
func RunTestGet(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := create(ctx, t, s, configMap("get", "a", nil, "k", "v"))
	rv := rvOf(t, stored.ResourceVersion)

	t.Run("not found", func(t *testing.T) {
		err := s.Get(ctx, key("get", "missing"), storage.GetOptions{}, &corev1.ConfigMap{})
		expectErr(t, "Get", err, storage.ErrNotFound)
	})
	t.Run("ignore not found", func(t *testing.T) {
		out := configMap("x", "stale", nil)
		if err := s.Get(ctx, key("get", "missing"), storage.GetOptions{IgnoreNotFound: true}, out); err != nil {
			t.Fatal(err)
		}
		if out.Name != "" || out.ResourceVersion != "" {
			t.Fatalf("IgnoreNotFound left %+v, want the zero object", out)
		}
	})
	t.Run("resourceVersion zero", func(t *testing.T) {
		// "0" accepts any state, even one from before the object existed:
		// a cache may not have seen the Create yet.
		out := &corev1.ConfigMap{}
		if err := s.Get(ctx, key("get", "a"), storage.GetOptions{ResourceVersion: "0", IgnoreNotFound: true}, out); err != nil {
			t.Fatal(err)
		}
		if out.ResourceVersion != "" && (out.ResourceVersion != stored.ResourceVersion || out.Data["k"] != "v") {
			t.Fatalf("Get = %+v, want %+v or nothing", out, stored)
		}
	})
	for name, opt := range map[string]string{"empty": "", "current": rvString(rv)} {
		t.Run("resourceVersion "+name, func(t *testing.T) {
			out := &corev1.ConfigMap{}
			if err := s.Get(ctx, key("get", "a"), storage.GetOptions{ResourceVersion: opt}, out); err != nil {
				t.Fatal(err)
			}
			if out.ResourceVersion != stored.ResourceVersion || out.Data["k"] != "v" {
				t.Fatalf("Get = %+v, want %+v", out, stored)
			}
		})
	}
	t.Run("resourceVersion in the future", func(t *testing.T) {
		opts := storage.GetOptions{ResourceVersion: rvString(currentRV(ctx, t, s) + 100)}
		err := s.Get(ctx, key("get", "a"), opts, &corev1.ConfigMap{})
		expectErr(t, "Get", err, storage.ErrTooLargeResourceVersion)
	})
	t.Run("invalid resourceVersion", func(t *testing.T) {
		err := s.Get(ctx, key("get", "a"), storage.GetOptions{ResourceVersion: "abc"}, &corev1.ConfigMap{})
		expectErr(t, "Get", err, storage.ErrInvalidResourceVersion)
	})
}

// RunTestCount checks Count under a collection key.
func RunTestCount(ctx context.Context, t *testing.T, s storage.Interface) {
	count := func(k string) int64 {
		t.Helper()
		n, err := s.Count(ctx, k)
		if err != nil {
			t.Fatalf("Count(%q): %v", k, err)
		}
		return n
	}
	if n := count(nsKey("count")); n != 0 {
		t.Fatalf("empty namespace counts %d", n)
	}
	for _, name := range []string{"a", "b", "c"} {
		create(ctx, t, s, configMap("count", name, nil))
	}
	create(ctx, t, s, configMap("count2", "a", nil))
	// "count" is a prefix of "count2": a collection must not count the other.
	if n := count(nsKey("count")); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
	remove(ctx, t, s, "count", "b")
	if n := count(nsKey("count") + "/"); n != 2 {
		t.Fatalf("Count after delete = %d, want 2", n)
	}
	if n := count(ResourcePrefix); n < 3 {
		t.Fatalf("Count of the resource = %d, want at least 3", n)
	}
}
