package aggregation

import "context"

// Sync runs one sync of the named role, for tests.
func Sync(ctx context.Context, c *Controller, name string) error { return c.sync(ctx, name) }
