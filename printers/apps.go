package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var appsConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	appsKind("Deployment"):         New(deploymentColumns, deploymentRow),
	appsKind("ReplicaSet"):         New(replicaSetColumns, replicaSetRow),
	appsKind("StatefulSet"):        New(statefulSetColumns, statefulSetRow),
	appsKind("DaemonSet"):          New(daemonSetColumns, daemonSetRow),
	appsKind("ControllerRevision"): New(controllerRevisionColumns, controllerRevisionRow),
}

func appsKind(kind string) schema.GroupVersionKind { return appsv1.SchemeGroupVersion.WithKind(kind) }

var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Ready", "string", "Number of the pod with ready state"),
	column("Up-to-date", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
	column("Available", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]),
}

func deploymentRow(d *appsv1.Deployment, now time.Time) (metav1.TableRow, error) {
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return rowOf(d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, deref(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), since(d.CreationTimestamp, now),
		names, images, selector)
}

var replicaSetColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Desired", "integer", appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]),
	column("Current", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
	column("Ready", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]),
}

func replicaSetRow(rs *appsv1.ReplicaSet, now time.Time) (metav1.TableRow, error) {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return rowOf(rs.Name, int64(deref(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		since(rs.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(rs.Spec.Selector))
}

var statefulSetColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Ready", "string", "Number of the pod with ready state"),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
}

func statefulSetRow(ss *appsv1.StatefulSet, now time.Time) (metav1.TableRow, error) {
	names, images := containerCells(ss.Spec.Template.Spec.Containers)
	return rowOf(ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, deref(ss.Spec.Replicas)),
		since(ss.CreationTimestamp, now), names, images)
}

var daemonSetColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]),
	column("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]),
	column("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]),
	column("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]),
	column("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]),
	column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]),
}

func daemonSetRow(ds *appsv1.DaemonSet, now time.Time) (metav1.TableRow, error) {
	st := ds.Status
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return rowOf(ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		since(ds.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(ds.Spec.Selector))
}

var controllerRevisionColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Controller", "string", "Controller of the object"),
	column("Revision", "string", appsv1.ControllerRevision{}.SwaggerDoc()["revision"]),
	ageColumn(),
}

// controllerRevisionRow names the controller as kind.group/name.
func controllerRevisionRow(cr *appsv1.ControllerRevision, now time.Time) (metav1.TableRow, error) {
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return metav1.TableRow{}, err
		}
		controller = ref.Name
		if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
			controller = strings.ToLower(gk.String()) + "/" + ref.Name
		}
	}
	return rowOf(cr.Name, controller, cr.Revision, since(cr.CreationTimestamp, now))
}
