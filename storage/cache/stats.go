package cache

import (
	"context"
	"errors"

	"github.com/capstan-io/capstan/storage"
)

// Stats are the backend's, if it reports them: it sees every object the
// cache fills from.
func (c *Cacher) Stats(ctx context.Context) (storage.Stats, error) {
	if r, ok := c.backend.storage.(storage.StatsReporter); ok {
		return r.Stats(ctx)
	}
	return storage.Stats{}, errors.New("the backend reports no stats")
}
