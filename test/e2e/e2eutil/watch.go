package e2eutil

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

func NextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no watch event within 20s")
	}
	panic("unreachable")
}
