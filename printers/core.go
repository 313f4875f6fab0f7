package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// coreConvertors print core/v1. LimitRanges have none: kube prints them
// with the default table.
var coreConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	coreKind("Namespace"):             New(namespaceColumns, namespaceRow),
	coreKind("ConfigMap"):             New(configMapColumns, configMapRow),
	coreKind("Secret"):                New(secretColumns, secretRow),
	coreKind("ServiceAccount"):        New(serviceAccountColumns, serviceAccountRow),
	coreKind("Event"):                 New(eventColumns, eventRow),
	coreKind("Pod"):                   New(podColumns, podRow),
	coreKind("PodTemplate"):           New(podTemplateColumns, podTemplateRow),
	coreKind("ReplicationController"): New(replicationControllerColumns, replicationControllerRow),
	coreKind("Service"):               New(serviceColumns, serviceRow),
	coreKind("Endpoints"):             New(endpointsColumns, endpointsRow),
	coreKind("Node"):                  New(nodeColumns, nodeRow),
	coreKind("PersistentVolume"):      New(persistentVolumeColumns, persistentVolumeRow),
	coreKind("PersistentVolumeClaim"): New(persistentVolumeClaimColumns, persistentVolumeClaimRow),
	coreKind("ComponentStatus"):       New(componentStatusColumns, componentStatusRow),
	coreKind("ResourceQuota"):         New(resourceQuotaColumns, resourceQuotaRow),
}

func coreKind(kind string) schema.GroupVersionKind { return corev1.SchemeGroupVersion.WithKind(kind) }

var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Status", "string", "The status of the namespace"),
	ageColumn(),
}

func namespaceRow(ns *corev1.Namespace, now time.Time) (metav1.TableRow, error) {
	return rowOf(ns.Name, string(ns.Status.Phase), since(ns.CreationTimestamp, now))
}

var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]),
	ageColumn(),
}

func configMapRow(cm *corev1.ConfigMap, now time.Time) (metav1.TableRow, error) {
	return rowOf(cm.Name, int64(len(cm.Data)+len(cm.BinaryData)), since(cm.CreationTimestamp, now))
}

var secretColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Type", "string", corev1.Secret{}.SwaggerDoc()["type"]),
	column("Data", "string", corev1.Secret{}.SwaggerDoc()["data"]),
	ageColumn(),
}

// secretRow counts stringData's keys with data's, as kube does once it has
// merged the two.
func secretRow(s *corev1.Secret, now time.Time) (metav1.TableRow, error) {
	n := len(s.Data)
	for k := range s.StringData {
		if _, ok := s.Data[k]; !ok {
			n++
		}
	}
	return rowOf(s.Name, string(s.Type), int64(n), since(s.CreationTimestamp, now))
}

var serviceAccountColumns = []metav1.TableColumnDefinition{nameColumn(), ageColumn()}

func serviceAccountRow(sa *corev1.ServiceAccount, now time.Time) (metav1.TableRow, error) {
	return rowOf(sa.Name, since(sa.CreationTimestamp, now))
}

var podTemplateColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Containers", "string", containersDoc),
	column("Images", "string", imagesDoc),
	column("Pod Labels", "string", "The labels for the pod template."),
}

func podTemplateRow(pt *corev1.PodTemplate, _ time.Time) (metav1.TableRow, error) {
	names, images := containerCells(pt.Template.Spec.Containers)
	return rowOf(pt.Name, names, images, labels.FormatLabels(pt.Template.Labels))
}

var replicationControllerColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Desired", "integer", corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]),
	column("Current", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]),
	column("Ready", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]),
}

func replicationControllerRow(rc *corev1.ReplicationController, now time.Time) (metav1.TableRow, error) {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return rowOf(rc.Name, int64(deref(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		since(rc.CreationTimestamp, now), names, images, labels.FormatLabels(rc.Spec.Selector))
}

var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Status", "string", "The status of the node"),
	column("Roles", "string", "The roles of the node"),
	ageColumn(),
	column("Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]),
	wideColumn("Internal-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	wideColumn("External-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	wideColumn("OS-Image", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]),
	wideColumn("Kernel-Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]),
	wideColumn("Container-Runtime", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]),
}

func nodeRow(n *corev1.Node, now time.Time) (metav1.TableRow, error) {
	info := n.Status.NodeInfo
	kernel := info.KernelVersion
	if kernel == "" {
		kernel = "<unknown>"
	}
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return rowOf(n.Name, nodeStatus(n), orNone(strings.Join(nodeRoles(n), ",")), since(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernel, orUnknown(info.ContainerRuntimeVersion))
}

// nodeStatus is Ready or NotReady (Unknown without the condition), then
// SchedulingDisabled when the node is cordoned.
func nodeStatus(n *corev1.Node) string {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		status = "Not" + string(c.Type)
		if c.Status == corev1.ConditionTrue {
			status = string(c.Type)
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

// nodeRoles are the sorted, distinct roles of the node-role.kubernetes.io/
// label prefix and of the kubernetes.io/role label.
func nodeRoles(n *corev1.Node) []string {
	roles := map[string]bool{}
	for k, v := range n.Labels {
		if role, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && role != "" {
			roles[role] = true
		} else if k == "kubernetes.io/role" && v != "" {
			roles[v] = true
		}
	}
	return sortedKeys(roles)
}

func nodeAddress(n *corev1.Node, typ corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == typ {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var resourceQuotaColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
	column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
	ageColumn(),
}

// resourceQuotaRow prints "name: used/hard" of each hard limit, sorted by
// name; the limits.* ones in the Limit column, the others in Request.
func resourceQuotaRow(q *corev1.ResourceQuota, now time.Time) (metav1.TableRow, error) {
	names := make(map[string]bool, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names[string(name)] = true
	}
	var requests, limits []string
	for _, name := range sortedKeys(names) {
		used, hard := q.Status.Used[corev1.ResourceName(name)], q.Status.Hard[corev1.ResourceName(name)]
		cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if prefix, _, ok := strings.Cut(name, "."); ok && prefix == "limits" {
			limits = append(limits, cell)
		} else {
			requests = append(requests, cell)
		}
	}
	return rowOf(q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), since(q.CreationTimestamp, now))
}

var componentStatusColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Status", "string", "Status of the component conditions"),
	column("Message", "string", "Message of the component conditions"),
	column("Error", "string", "Error of the component conditions"),
}

// componentStatusRow shows the Healthy condition: Healthy when true,
// Unhealthy otherwise, Unknown without one.
func componentStatusRow(s *corev1.ComponentStatus, _ time.Time) (metav1.TableRow, error) {
	status, message, errText := "Unknown", "", ""
	for _, c := range s.Conditions {
		if c.Type == corev1.ComponentHealthy {
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errText = c.Message, c.Error
			break
		}
	}
	return rowOf(s.Name, status, message, errText)
}
