package etcd3

import (
	"testing"

	"github.com/capstan-io/capstan/storage/storagetest"
)

func TestCreate(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestCreate(t.Context(), t, s)
	})
}

func TestGet(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestGet(t.Context(), t, s)
	})
}

func TestGuaranteedUpdate(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestGuaranteedUpdate(t.Context(), t, s)
	})
}

func TestDelete(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestDelete(t.Context(), t, s)
	})
}

func TestList(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, compact storagetest.CompactFunc) {
		storagetest.RunTestList(t.Context(), t, s, compact)
	})
}

func TestWatch(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, compact storagetest.CompactFunc) {
		storagetest.RunTestWatch(t.Context(), t, s, compact)
	})
}

func TestCount(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestCount(t.Context(), t, s)
	})
}

func TestKeySafety(t *testing.T) {
	forEachClient(t, func(t *testing.T, s *Store, _ storagetest.CompactFunc) {
		storagetest.RunTestKeySafety(t.Context(), t, s)
	})
}
