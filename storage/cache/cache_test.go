package cache

import (
	"testing"

	"github.com/capstan-io/capstan/storage/storagetest"
)

// The conformance suite, against a cache over etcd3 that keeps its
// objects encoded (as the server's caches of built-in resources do), and
// below against one that keeps them decoded (custom resources).

func TestCreate(t *testing.T) {
	storagetest.RunTestCreate(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

func TestGet(t *testing.T) {
	storagetest.RunTestGet(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

func TestGuaranteedUpdate(t *testing.T) {
	storagetest.RunTestGuaranteedUpdate(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

func TestDelete(t *testing.T) {
	storagetest.RunTestDelete(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

func TestList(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	storagetest.RunTestList(t.Context(), t, c, compactor(c))
}

func TestWatch(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	storagetest.RunTestWatch(t.Context(), t, c, compactor(c))
}

func TestCount(t *testing.T) {
	storagetest.RunTestCount(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

func TestKeySafety(t *testing.T) {
	storagetest.RunTestKeySafety(t.Context(), t, newTestCacher(t, newTestStore(t), Config{}))
}

// TestKeptObjects runs the suite's reads and watches against a cache that
// keeps its objects decoded.
func TestKeptObjects(t *testing.T) {
	t.Run("Get", func(t *testing.T) {
		storagetest.RunTestGet(t.Context(), t, newTestCacher(t, newTestStore(t), Config{Codec: keptObjects}))
	})
	t.Run("GuaranteedUpdate", func(t *testing.T) {
		storagetest.RunTestGuaranteedUpdate(t.Context(), t, newTestCacher(t, newTestStore(t), Config{Codec: keptObjects}))
	})
	t.Run("List", func(t *testing.T) {
		c := newTestCacher(t, newTestStore(t), Config{Codec: keptObjects})
		storagetest.RunTestList(t.Context(), t, c, compactor(c))
	})
	t.Run("Watch", func(t *testing.T) {
		c := newTestCacher(t, newTestStore(t), Config{Codec: keptObjects})
		storagetest.RunTestWatch(t.Context(), t, c, compactor(c))
	})
}
