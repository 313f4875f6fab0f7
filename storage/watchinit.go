package storage

import "context"

type watchInitializedKey struct{}

// WithWatchInitialized returns ctx carrying signal, which a watch started
// with it calls once its initial events are handed over. API Priority
// and Fairness holds a watch's seats until then: the initial state is
// the expensive part of a watch.
func WithWatchInitialized(ctx context.Context, signal func()) context.Context {
	return context.WithValue(ctx, watchInitializedKey{}, signal)
}

// WatchInitialized calls the signal of ctx, if any. It may be called more
// than once; the signal must tolerate that.
func WatchInitialized(ctx context.Context) {
	if signal, ok := ctx.Value(watchInitializedKey{}).(func()); ok {
		signal()
	}
}
