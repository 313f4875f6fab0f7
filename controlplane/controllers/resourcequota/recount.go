package resourcequota

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	quota "github.com/capstan-io/capstan/admission/resourcequota"
)

var metav1UpdateOptions = metav1.UpdateOptions{}

// recount is the usage of the quota's hard names in its namespace: every
// name is present, zero when nothing uses it.
func (c *Controller) recount(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	q = q.DeepCopy()
	q.Status.Hard = q.Spec.Hard // what applies is the spec, status may lag
	used := corev1.ResourceList{}
	for n := range q.Spec.Hard {
		used[n] = resource.MustParse("0")
	}
	for _, gr := range resourcesOf(q.Spec.Hard) {
		objs, err := c.list(ctx, gr, q.Namespace)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			u, err := quota.Usage(gr, q, obj)
			if err != nil {
				return nil, err
			}
			used = quota.Add(used, u)
		}
	}
	return used, nil
}

// resourcesOf are the resources whose objects the names charge.
func resourcesOf(hard corev1.ResourceList) []schema.GroupResource {
	seen := map[schema.GroupResource]bool{}
	var out []schema.GroupResource
	addGR := func(gr schema.GroupResource) {
		if !seen[gr] {
			seen[gr] = true
			out = append(out, gr)
		}
	}
	for n := range hard {
		known := false
		for _, r := range []string{"pods", "services", "persistentvolumeclaims", "configmaps", "secrets", "replicationcontrollers", "resourcequotas"} {
			if gr := (schema.GroupResource{Resource: r}); quota.Tracks(gr, n) {
				addGR(gr)
				known = true
			}
		}
		if rest, ok := strings.CutPrefix(string(n), "count/"); ok && !known {
			resource, group, _ := strings.Cut(rest, ".")
			addGR(schema.GroupResource{Group: group, Resource: resource})
		}
	}
	return out
}

// list reads a namespace's objects of gr: typed for the resources whose
// usage reads their spec, metadata only for counted ones.
func (c *Controller) list(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	core := c.cfg.Client.CoreV1()
	var out []runtime.Object
	switch {
	case gr.Group == "" && gr.Resource == "pods":
		l, err := core.Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case gr.Group == "" && gr.Resource == "services":
		l, err := core.Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case gr.Group == "" && gr.Resource == "persistentvolumeclaims":
		l, err := core.PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		gvr, err := c.mapper.ResourceFor(gr.WithVersion(""))
		if err != nil {
			return nil, err
		}
		l, err := c.cfg.Metadata.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}
