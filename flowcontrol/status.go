package flowcontrol

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	flowcontrolapply "k8s.io/client-go/applyconfigurations/flowcontrol/v1"
	"k8s.io/client-go/kubernetes"
)

// FieldManager is the manager of the Dangling conditions this server
// writes, kube's name for it.
const FieldManager = "api-priority-and-fairness-config-consumer-v1"

// danglingUpdate is a FlowSchema whose Dangling condition must change.
type danglingUpdate struct {
	name string
	// resourceVersion is that of the FlowSchema the change was found in.
	resourceVersion string
	condition       flowcontrolv1.FlowSchemaCondition
}

// writtenConditions are the Dangling conditions written, by FlowSchema,
// until the informer shows the FlowSchema as written: a configuration
// change seen meanwhile (at start, each object the producer creates) must
// not write the same condition again over the same version.
type writtenConditions map[string]danglingUpdate

// pending reports whether u was written already over the version it was
// found in.
func (w writtenConditions) pending(u danglingUpdate) bool {
	done, ok := w[u.name]
	return ok && done.resourceVersion == u.resourceVersion && sameCondition(done.condition, u.condition)
}

// prune forgets the FlowSchemas that are gone.
func (w writtenConditions) prune(fss []*flowcontrolv1.FlowSchema) {
	present := make(map[string]bool, len(fss))
	for _, fs := range fss {
		present[fs.Name] = true
	}
	for name := range w {
		if !present[name] {
			delete(w, name)
		}
	}
}

func sameCondition(a, b flowcontrolv1.FlowSchemaCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// danglingChange returns the condition fs should have if it differs from
// the one it has: True when its priority level does not exist.
func danglingChange(fs *flowcontrolv1.FlowSchema, dangling bool, now metav1.Time) (danglingUpdate, bool) {
	plName := fs.Spec.PriorityLevelConfiguration.Name
	want := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse,
		Reason:  "Found",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", plName)}
	if dangling {
		want.Status, want.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		want.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", plName)
	}
	for _, c := range fs.Status.Conditions {
		if sameCondition(c, want) {
			return danglingUpdate{}, false
		}
	}
	want.LastTransitionTime = now
	return danglingUpdate{name: fs.Name, resourceVersion: fs.ResourceVersion, condition: want}, true
}

// writeDangling applies the condition to the FlowSchema's status, as
// kube's config consumer does (server-side apply, forced).
func (c *Controller) writeDangling(ctx context.Context, client kubernetes.Interface, u danglingUpdate) error {
	cond := flowcontrolapply.FlowSchemaCondition().WithType(u.condition.Type).WithStatus(u.condition.Status).
		WithReason(u.condition.Reason).WithMessage(u.condition.Message).WithLastTransitionTime(u.condition.LastTransitionTime)
	apply := flowcontrolapply.FlowSchema(u.name).WithStatus(flowcontrolapply.FlowSchemaStatus().WithConditions(cond))
	_, err := client.FlowcontrolV1().FlowSchemas().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: the informer will tell
	}
	if err != nil {
		c.cfg.Logger.Warn("writing a FlowSchema's Dangling condition", "flowSchema", u.name, "err", err)
	}
	return err
}
