package storageversionmigrator

import (
	"context"

	svmv1 "k8s.io/api/storagemigration/v1"
)

// Migrate runs one attempt of a migration, as the loop's sync does.
func Migrate(ctx context.Context, c *Controller, svm *svmv1.StorageVersionMigration) error {
	return c.migrate(ctx, svm)
}
