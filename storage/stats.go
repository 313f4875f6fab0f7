package storage

import "context"

// Stats describe what a resource's storage holds: how many objects, and
// their average size in bytes as stored (0 when unknown). API Priority
// and Fairness estimates the cost of lists from them.
type Stats struct {
	ObjectCount      int64
	AverageSizeBytes int64
}

// StatsReporter is a storage that can tell its Stats.
type StatsReporter interface {
	Stats(ctx context.Context) (Stats, error)
}
