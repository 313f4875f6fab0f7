package namespace

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resource is a namespaced resource the controller can delete from.
type resource struct {
	gvr schema.GroupVersionResource
	// list is false for resources that can be deleted but not listed: the
	// controller cannot tell whether any remain.
	list bool
	// deleteCollection is true when one request deletes them all.
	deleteCollection bool
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// deletableResources returns the resources of lists that support delete,
// pods first (their grace period governs the rest), then in a stable order.
// A group version that does not parse is skipped and reported.
func deletableResources(lists []*metav1.APIResourceList) ([]resource, error) {
	var out []resource
	var errs []error
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("group version %q: %w", list.GroupVersion, err))
			continue
		}
		for _, r := range list.APIResources {
			if !slices.Contains(r.Verbs, "delete") {
				continue
			}
			out = append(out, resource{
				gvr:              gv.WithResource(r.Name),
				list:             slices.Contains(r.Verbs, "list"),
				deleteCollection: slices.Contains(r.Verbs, "deletecollection"),
			})
		}
	}
	slices.SortFunc(out, func(a, b resource) int {
		if a.gvr == podsGVR || b.gvr == podsGVR {
			return boolRank(b.gvr == podsGVR) - boolRank(a.gvr == podsGVR)
		}
		return cmp.Or(cmp.Compare(a.gvr.Group, b.gvr.Group),
			cmp.Compare(a.gvr.Version, b.gvr.Version),
			cmp.Compare(a.gvr.Resource, b.gvr.Resource))
	})
	return out, errors.Join(errs...)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
