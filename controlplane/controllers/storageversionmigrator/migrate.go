package storageversionmigrator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/dynamic"
)

// kube's reasons and messages of a migration's conditions.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
	msgCompleted    = "Migration completed"
	pageSize        = 500
	resolveGrace    = time.Minute
)

// migrate runs one migration: it records the resource version the
// migration starts from and Running, rewrites every object not written
// since, then records Succeeded; an error the next attempt cannot fix
// records Failed.
func (c *Controller) migrate(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	gvr, gvk, err := c.resolve(svm.Spec.Resource)
	if err != nil {
		// As kube's controller, give discovery a minute from the
		// migration's creation to learn the resource (a CRD just made)
		// before failing it.
		if wait := time.Until(svm.CreationTimestamp.Add(resolveGrace)); wait > 0 {
			c.queue.AddAfter(svm.Name, wait)
			return nil
		}
		return c.finish(ctx, svm, svmv1.MigrationFailed, reasonFailed, err.Error())
	}
	client := c.cfg.Dynamic.Resource(gvr)
	if svm.Status.ResourceVersion == "" {
		list, err := client.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return err
		}
		svm.Status.ResourceVersion = list.GetResourceVersion()
		setCondition(svm, svmv1.MigrationRunning, metav1.ConditionTrue, reasonRunning, "The migration is running")
		if svm, err = c.cfg.Client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if err := c.rewriteAll(ctx, client, gvk, svm.Status.ResourceVersion); err != nil {
		if retriable(err) {
			return err
		}
		return c.finish(ctx, svm, svmv1.MigrationFailed, reasonFailed, err.Error())
	}
	return c.finish(ctx, svm, svmv1.MigrationSucceeded, reasonSucceeded, msgCompleted)
}

// resolve finds the served version of gr, looking again once if the
// mapper does not know it yet.
func (c *Controller) resolve(gr metav1.GroupResource) (schema.GroupVersionResource, schema.GroupVersionKind, error) {
	partial := schema.GroupVersionResource{Group: gr.Group, Resource: gr.Resource}
	gvr, err := c.cfg.Mapper.ResourceFor(partial)
	if meta.IsNoMatchError(err) {
		c.cfg.Mapper.Reset()
		gvr, err = c.cfg.Mapper.ResourceFor(partial)
	}
	if err != nil {
		return gvr, schema.GroupVersionKind{}, err
	}
	gvk, err := c.cfg.Mapper.KindFor(gvr)
	return gvr, gvk, err
}

// rewriteAll patches, page by page, every object last written at or
// before since with a patch that changes nothing but makes the server
// write the object again; one written since, changed or gone meanwhile
// needs nothing.
func (c *Controller) rewriteAll(ctx context.Context, client dynamic.NamespaceableResourceInterface, gvk schema.GroupVersionKind, since string) error {
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		list, err := client.List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range list.Items {
			if err := c.rewrite(ctx, client, gvk, &list.Items[i], since); err != nil {
				return err
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

func (c *Controller) rewrite(ctx context.Context, client dynamic.NamespaceableResourceInterface, gvk schema.GroupVersionKind, obj *unstructured.Unstructured, since string) error {
	cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), since)
	if err != nil {
		return err
	}
	if cmp > 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
		"metadata": map[string]any{"uid": obj.GetUID(), "resourceVersion": obj.GetResourceVersion()}})
	if err != nil {
		return err
	}
	_, err = client.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: Name})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// finish records the end of a migration: Running false and t true.
func (c *Controller) finish(ctx context.Context, svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, reason, message string) error {
	setCondition(svm, svmv1.MigrationRunning, metav1.ConditionFalse, reason, message)
	setCondition(svm, t, metav1.ConditionTrue, reason, message)
	_, err := c.cfg.Client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("recording %s: %w", t, err)
	}
	c.cfg.Logger.Info("migration done", "migration", svm.Name, "resource", svm.Spec.Resource.String(), "result", t, "message", message)
	return nil
}

func setCondition(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message})
}

// retriable errors end this attempt and leave the migration to the next.
func retriable(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}
