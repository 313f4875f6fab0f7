package storage

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// TimedObject is a watch event's object with the time its store decoded
// it, sent instead of the bare object to a watch that asked for it with
// ListOptions.RecordTimes: the watch cache, which times each event's way
// from storage to its watchers (kube's watch dispatch stages).
type TimedObject struct {
	runtime.Object
	Decoded time.Time
}

// Untimed returns obj's object and its decoding time if obj is a
// TimedObject, else obj and the zero time.
func Untimed(obj runtime.Object) (runtime.Object, time.Time) {
	if t, ok := obj.(*TimedObject); ok {
		return t.Object, t.Decoded
	}
	return obj, time.Time{}
}
