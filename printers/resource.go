package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// resourceConvertors print resource.k8s.io/v1; DeviceTaintRules have no
// printer in kube and get the default table.
var resourceConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	resourceKind("DeviceClass"):           New(nameAgeColumns, nameAgeRow[*resourcev1.DeviceClass]),
	resourceKind("ResourceClaim"):         New(resourceClaimColumns, resourceClaimRow),
	resourceKind("ResourceClaimTemplate"): New(nameAgeColumns, nameAgeRow[*resourcev1.ResourceClaimTemplate]),
	resourceKind("ResourceSlice"):         New(resourceSliceColumns, resourceSliceRow),
}

func resourceKind(kind string) schema.GroupVersionKind {
	return resourcev1.SchemeGroupVersion.WithKind(kind)
}

var nameAgeColumns = []metav1.TableColumnDefinition{nameColumn(), ageColumn()}

func nameAgeRow[T metav1.Object](obj T, now time.Time) (metav1.TableRow, error) {
	return rowOf(obj.GetName(), since(obj.GetCreationTimestamp(), now))
}

var resourceClaimColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
	ageColumn(),
}

func resourceClaimRow(c *resourcev1.ResourceClaim, now time.Time) (metav1.TableRow, error) {
	return rowOf(c.Name, resourceClaimState(c), since(c.CreationTimestamp, now))
}

// resourceClaimState is "deleted", "pending", "allocated" and "reserved" as
// they apply, comma separated.
func resourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil && c.DeletionTimestamp == nil:
		states = append(states, "pending")
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}

var resourceSliceColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Node", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]),
	column("Driver", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]),
	column("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
	ageColumn(),
}

func resourceSliceRow(s *resourcev1.ResourceSlice, now time.Time) (metav1.TableRow, error) {
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return rowOf(s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, since(s.CreationTimestamp, now))
}
