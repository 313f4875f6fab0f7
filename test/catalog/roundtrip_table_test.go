package catalog

import (
	"encoding/base64"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Minimal pod specs. An image without a tag is pulled Always, with a tag
// other than latest IfNotPresent.
const (
	podSpec = `containers: [{name: app, image: nginx}]`
	labeled = `metadata: {labels: {app: rt}}
    spec: {containers: [{name: app, image: "nginx:1.27"}]}`
	selectorAndTemplate = `selector: {matchLabels: {app: rt}}
  template:
    ` + labeled
)

// podDefaults are kube's PodSpec defaults (pkg/apis/core/v1/defaults.go
// SetDefaults_PodSpec, SetDefaults_Container and the +default tags) under prefix.
func podDefaults(prefix, pullPolicy string) map[string]any {
	return map[string]any{
		prefix + "restartPolicy":                          "Always",
		prefix + "dnsPolicy":                              "ClusterFirst",
		prefix + "schedulerName":                          "default-scheduler",
		prefix + "terminationGracePeriodSeconds":          30,
		prefix + "securityContext":                        map[string]any{},
		prefix + "containers[0].terminationMessagePath":   "/dev/termination-log",
		prefix + "containers[0].terminationMessagePolicy": "File",
		prefix + "containers[0].imagePullPolicy":          pullPolicy,
		prefix + "containers[0].resources":                map[string]any{},
	}
}

func merged(maps ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// roundtripTable is the catalog of issue 4, one row a resource, with kube's
// defaults for each written out from the API reference and kube's defaulters.
func roundtripTable(t *testing.T) []resourceCase {
	csr := base64.StdEncoding.EncodeToString(certificateRequest(t))
	return []resourceCase{
		// core/v1
		{gvr: gvr("", "v1", "pods"), kind: "Pod", namespaced: true, status: true, more: []string{"ephemeralcontainers"},
			manifest: "spec: {" + podSpec + "}",
			defaults: merged(podDefaults("spec.", "Always"), map[string]any{
				"spec.enableServiceLinks": true,
				"spec.priority":           0,
				"spec.preemptionPolicy":   "PreemptLowerPriority",
				"status.phase":            "Pending",
				"status.qosClass":         "BestEffort",
			}),
			patch: `{"spec":{"activeDeadlineSeconds":60}}`, patched: map[string]any{"spec.activeDeadlineSeconds": 60}},
		{gvr: gvr("", "v1", "services"), kind: "Service", namespaced: true, status: true,
			manifest: "spec: {ports: [{port: 80}]}",
			defaults: map[string]any{
				"spec.type":                  "ClusterIP",
				"spec.sessionAffinity":       "None",
				"spec.ipFamilyPolicy":        "SingleStack",
				"spec.ipFamilies":            []string{"IPv4"},
				"spec.internalTrafficPolicy": "Cluster",
				"spec.ports[0].protocol":     "TCP",
				"spec.ports[0].targetPort":   80,
			},
			patch: `{"spec":{"selector":{"app":"rt"}}}`, patched: map[string]any{"spec.selector.app": "rt"}},
		{gvr: gvr("", "v1", "endpoints"), kind: "Endpoints", namespaced: true,
			manifest: "subsets: [{addresses: [{ip: 10.1.2.3}], ports: [{port: 80}]}]",
			defaults: map[string]any{"subsets[0].ports[0].protocol": "TCP"},
			patch:    `{"subsets":[{"addresses":[{"ip":"10.1.2.4"}],"ports":[{"port":81}]}]}`,
			patched:  map[string]any{"subsets[0].addresses[0].ip": "10.1.2.4", "subsets[0].ports[0].protocol": "TCP"}},
		{gvr: gvr("", "v1", "nodes"), kind: "Node", status: true,
			manifest: `status: {capacity: {cpu: "4"}}`,
			defaults: map[string]any{"status.allocatable.cpu": "4"},
			patch:    `{"spec":{"unschedulable":true}}`, patched: map[string]any{"spec.unschedulable": true}},
		{gvr: gvr("", "v1", "persistentvolumes"), kind: "PersistentVolume", status: true,
			manifest: "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/rt}}",
			defaults: map[string]any{
				"spec.persistentVolumeReclaimPolicy": "Retain",
				"spec.volumeMode":                    "Filesystem",
				"spec.hostPath.type":                 "",
				"status.phase":                       "Pending",
			},
			patch: `{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}`, patched: map[string]any{"spec.persistentVolumeReclaimPolicy": "Delete"}},
		{gvr: gvr("", "v1", "persistentvolumeclaims"), kind: "PersistentVolumeClaim", namespaced: true, status: true,
			manifest: "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}",
			defaults: map[string]any{"spec.volumeMode": "Filesystem", "status.phase": "Pending"}},
		{gvr: gvr("", "v1", "replicationcontrollers"), kind: "ReplicationController", namespaced: true, status: true, scale: true,
			manifest: "spec:\n  template:\n    " + labeled,
			defaults: merged(podDefaults("spec.template.spec.", "IfNotPresent"), map[string]any{
				"spec.replicas":       1,
				"spec.selector":       map[string]any{"app": "rt"},
				"metadata.labels.app": "rt",
			}),
			patch: `{"spec":{"minReadySeconds":5}}`, patched: map[string]any{"spec.minReadySeconds": 5}},
		{gvr: gvr("", "v1", "podtemplates"), kind: "PodTemplate", namespaced: true,
			manifest: "template: {spec: {containers: [{name: app, image: \"nginx:latest\"}]}}",
			defaults: podDefaults("template.spec.", "Always"),
			patch:    `{"template":{"spec":{"activeDeadlineSeconds":60}}}`, patched: map[string]any{"template.spec.activeDeadlineSeconds": 60}},
		{gvr: gvr("", "v1", "limitranges"), kind: "LimitRange", namespaced: true,
			manifest: "spec: {limits: [{type: Container, max: {cpu: \"2\"}, min: {memory: 64Mi}}]}",
			defaults: map[string]any{
				"spec.limits[0].default":        map[string]any{"cpu": "2"},
				"spec.limits[0].defaultRequest": map[string]any{"cpu": "2", "memory": "64Mi"},
			},
			// Defaulting applies to the patched object too.
			patch:   `{"spec":{"limits":[{"type":"Container","max":{"cpu":"3"}}]}}`,
			patched: map[string]any{"spec.limits[0].default": map[string]any{"cpu": "3"}, "spec.limits[0].defaultRequest": map[string]any{"cpu": "3"}}},
		{gvr: gvr("", "v1", "resourcequotas"), kind: "ResourceQuota", namespaced: true, status: true,
			manifest: `spec: {hard: {pods: "10"}}`,
			patch:    `{"spec":{"hard":{"pods":"20"}}}`, patched: map[string]any{"spec.hard.pods": "20"}},
		{gvr: gvr("", "v1", "configmaps"), kind: "ConfigMap", namespaced: true,
			manifest: "data: {a: b}",
			patch:    `{"data":{"c":"d"}}`, patched: map[string]any{"data": map[string]any{"a": "b", "c": "d"}}},
		{gvr: gvr("", "v1", "secrets"), kind: "Secret", namespaced: true,
			manifest: "stringData: {a: b}",
			defaults: map[string]any{"type": "Opaque", "data": map[string]any{"a": "Yg=="}},
			patch:    `{"stringData":{"c":"d"}}`, patched: map[string]any{"data": map[string]any{"a": "Yg==", "c": "ZA=="}}},
		{gvr: gvr("", "v1", "serviceaccounts"), kind: "ServiceAccount", namespaced: true,
			patch: `{"automountServiceAccountToken":false}`, patched: map[string]any{"automountServiceAccountToken": false}},
		{gvr: gvr("", "v1", "events"), kind: "Event", namespaced: true,
			manifest: "involvedObject: {kind: Pod, name: web, namespace: " + roundtripNamespace + "}\nreason: Started\nmessage: hi\ntype: Normal",
			patch:    `{"count":2}`, patched: map[string]any{"count": 2}},

		// apps/v1
		{gvr: gvr("apps", "v1", "deployments"), kind: "Deployment", namespaced: true, status: true, scale: true,
			manifest: "spec:\n  " + selectorAndTemplate,
			defaults: merged(podDefaults("spec.template.spec.", "IfNotPresent"), map[string]any{
				"spec.replicas":                              1,
				"spec.strategy.type":                         "RollingUpdate",
				"spec.strategy.rollingUpdate.maxSurge":       "25%",
				"spec.strategy.rollingUpdate.maxUnavailable": "25%",
				"spec.revisionHistoryLimit":                  10,
				"spec.progressDeadlineSeconds":               600,
			}),
			patch: `{"spec":{"minReadySeconds":5}}`, patched: map[string]any{"spec.minReadySeconds": 5}},
		{gvr: gvr("apps", "v1", "replicasets"), kind: "ReplicaSet", namespaced: true, status: true, scale: true,
			manifest: "spec:\n  " + selectorAndTemplate,
			defaults: merged(podDefaults("spec.template.spec.", "IfNotPresent"), map[string]any{"spec.replicas": 1}),
			patch:    `{"spec":{"minReadySeconds":5}}`, patched: map[string]any{"spec.minReadySeconds": 5}},
		{gvr: gvr("apps", "v1", "statefulsets"), kind: "StatefulSet", namespaced: true, status: true, scale: true,
			manifest: "spec:\n  " + selectorAndTemplate,
			defaults: merged(podDefaults("spec.template.spec.", "IfNotPresent"), map[string]any{
				"spec.replicas":                                         1,
				"spec.podManagementPolicy":                              "OrderedReady",
				"spec.updateStrategy.type":                              "RollingUpdate",
				"spec.updateStrategy.rollingUpdate.partition":           0,
				"spec.revisionHistoryLimit":                             10,
				"spec.persistentVolumeClaimRetentionPolicy.whenDeleted": "Retain",
				"spec.persistentVolumeClaimRetentionPolicy.whenScaled":  "Retain",
			}),
			patch: `{"spec":{"minReadySeconds":5}}`, patched: map[string]any{"spec.minReadySeconds": 5}},
		{gvr: gvr("apps", "v1", "daemonsets"), kind: "DaemonSet", namespaced: true, status: true,
			manifest: "spec:\n  " + selectorAndTemplate,
			defaults: merged(podDefaults("spec.template.spec.", "IfNotPresent"), map[string]any{
				"spec.updateStrategy.type":                         "RollingUpdate",
				"spec.updateStrategy.rollingUpdate.maxUnavailable": 1,
				"spec.updateStrategy.rollingUpdate.maxSurge":       0,
				"spec.revisionHistoryLimit":                        10,
			}),
			patch: `{"spec":{"minReadySeconds":5}}`, patched: map[string]any{"spec.minReadySeconds": 5}},
		{gvr: gvr("apps", "v1", "controllerrevisions"), kind: "ControllerRevision", namespaced: true,
			manifest: "revision: 1\ndata: {a: b}"},

		// batch/v1
		{gvr: gvr("batch", "v1", "jobs"), kind: "Job", namespaced: true, status: true,
			manifest: "spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}}",
			defaults: map[string]any{
				"spec.completions":                                 1,
				"spec.parallelism":                                 1,
				"spec.backoffLimit":                                6,
				"spec.completionMode":                              "NonIndexed",
				"spec.suspend":                                     false,
				"spec.podReplacementPolicy":                        "TerminatingOrFailed",
				"spec.manualSelector":                              false,
				"spec.template.spec.dnsPolicy":                     "ClusterFirst",
				"spec.template.spec.schedulerName":                 "default-scheduler",
				"spec.template.spec.restartPolicy":                 "Never",
				"spec.template.spec.containers[0].imagePullPolicy": "Always",
			},
			patch: `{"spec":{"activeDeadlineSeconds":100}}`, patched: map[string]any{"spec.activeDeadlineSeconds": 100}},
		{gvr: gvr("batch", "v1", "cronjobs"), kind: "CronJob", namespaced: true, status: true,
			manifest: "spec: {schedule: \"*/5 * * * *\", jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure, containers: [{name: app, image: busybox}]}}}}}",
			defaults: map[string]any{
				"spec.concurrencyPolicy":          "Allow",
				"spec.suspend":                    false,
				"spec.successfulJobsHistoryLimit": 3,
				"spec.failedJobsHistoryLimit":     1,
				"spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds": 30,
			},
			patch: `{"spec":{"suspend":true}}`, patched: map[string]any{"spec.suspend": true}},

		// autoscaling
		{gvr: gvr("autoscaling", "v2", "horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true, status: true,
			manifest: "spec: {scaleTargetRef: {kind: Deployment, name: web, apiVersion: apps/v1}, maxReplicas: 5}",
			defaults: map[string]any{
				"spec.minReplicas": 1,
				"spec.metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{
					"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": 80}}}},
			},
			patch: `{"spec":{"maxReplicas":7}}`, patched: map[string]any{"spec.maxReplicas": 7}},
		{gvr: gvr("autoscaling", "v1", "horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true, status: true,
			name:     "rt-v1-{{n}}",
			manifest: "spec: {scaleTargetRef: {kind: Deployment, name: web, apiVersion: apps/v1}, maxReplicas: 5}",
			defaults: map[string]any{"spec.minReplicas": 1},
			patch:    `{"spec":{"maxReplicas":7}}`, patched: map[string]any{"spec.maxReplicas": 7}},

		// policy/v1
		{gvr: gvr("policy", "v1", "poddisruptionbudgets"), kind: "PodDisruptionBudget", namespaced: true, status: true,
			manifest: "spec: {minAvailable: 1, selector: {matchLabels: {app: rt}}}",
			patch:    `{"spec":{"minAvailable":2}}`, patched: map[string]any{"spec.minAvailable": 2}},

		// networking.k8s.io/v1
		{gvr: gvr("networking.k8s.io", "v1", "ingresses"), kind: "Ingress", namespaced: true, status: true,
			manifest: "spec: {defaultBackend: {service: {name: web, port: {number: 80}}}}",
			patch:    `{"spec":{"ingressClassName":"nginx"}}`, patched: map[string]any{"spec.ingressClassName": "nginx"}},
		{gvr: gvr("networking.k8s.io", "v1", "ingressclasses"), kind: "IngressClass",
			manifest: "spec: {controller: example.com/rt, parameters: {kind: Params, name: p}}",
			defaults: map[string]any{"spec.parameters.scope": "Cluster"}},
		{gvr: gvr("networking.k8s.io", "v1", "networkpolicies"), kind: "NetworkPolicy", namespaced: true,
			manifest: "spec: {podSelector: {}, ingress: [{ports: [{port: 80}]}]}",
			defaults: map[string]any{"spec.policyTypes": []string{"Ingress"}, "spec.ingress[0].ports[0].protocol": "TCP"},
			patch:    `{"spec":{"egress":[{"ports":[{"port":53,"protocol":"UDP"}]}]}}`,
			patched:  map[string]any{"spec.egress[0].ports[0].protocol": "UDP", "spec.policyTypes": []string{"Ingress"}}},
		{gvr: gvr("networking.k8s.io", "v1", "servicecidrs"), kind: "ServiceCIDR", status: true,
			manifest: "spec: {cidrs: [10.10{{n}}.0.0/24]}"},
		{gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), kind: "IPAddress",
			name:     "10.100.0.{{n}}",
			manifest: "spec: {parentRef: {resource: services, name: web, namespace: default}}"},

		// discovery.k8s.io/v1
		{gvr: gvr("discovery.k8s.io", "v1", "endpointslices"), kind: "EndpointSlice", namespaced: true,
			manifest: "addressType: IPv4\nendpoints: [{addresses: [10.1.2.3]}]\nports: [{port: 80}]",
			defaults: map[string]any{"ports[0].name": "", "ports[0].protocol": "TCP"},
			patch:    `{"endpoints":[{"addresses":["10.1.2.4"]}]}`, patched: map[string]any{"endpoints[0].addresses": []string{"10.1.2.4"}}},

		// storage.k8s.io/v1
		{gvr: gvr("storage.k8s.io", "v1", "storageclasses"), kind: "StorageClass",
			manifest: "provisioner: example.com/rt",
			defaults: map[string]any{"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
			patch:    `{"allowVolumeExpansion":true}`, patched: map[string]any{"allowVolumeExpansion": true}},
		{gvr: gvr("storage.k8s.io", "v1", "csidrivers"), kind: "CSIDriver",
			name:     "rt-{{n}}.example.com",
			manifest: "spec: {}",
			defaults: map[string]any{
				"spec.attachRequired":       true,
				"spec.podInfoOnMount":       false,
				"spec.storageCapacity":      false,
				"spec.fsGroupPolicy":        "ReadWriteOnceWithFSType",
				"spec.volumeLifecycleModes": []string{"Persistent"},
				"spec.requiresRepublish":    false,
			},
			patch: `{"spec":{"storageCapacity":true}}`, patched: map[string]any{"spec.storageCapacity": true}},
		{gvr: gvr("storage.k8s.io", "v1", "csinodes"), kind: "CSINode",
			manifest: "spec: {drivers: [{name: example.com, nodeID: n1}]}"},
		{gvr: gvr("storage.k8s.io", "v1", "csistoragecapacities"), kind: "CSIStorageCapacity", namespaced: true,
			manifest: "storageClassName: standard\ncapacity: 1Gi",
			patch:    `{"capacity":"2Gi"}`, patched: map[string]any{"capacity": "2Gi"}},
		{gvr: gvr("storage.k8s.io", "v1", "volumeattachments"), kind: "VolumeAttachment", status: true,
			manifest: "spec: {attacher: example.com, nodeName: n1, source: {persistentVolumeName: pv1}}"},

		// scheduling.k8s.io/v1, node.k8s.io/v1, certificates.k8s.io/v1
		{gvr: gvr("scheduling.k8s.io", "v1", "priorityclasses"), kind: "PriorityClass",
			manifest: "value: 1000",
			defaults: map[string]any{"preemptionPolicy": "PreemptLowerPriority"},
			patch:    `{"description":"patched"}`, patched: map[string]any{"description": "patched"}},
		{gvr: gvr("node.k8s.io", "v1", "runtimeclasses"), kind: "RuntimeClass",
			manifest: "handler: rt",
			patch:    `{"scheduling":{"nodeSelector":{"a":"b"}}}`, patched: map[string]any{"scheduling.nodeSelector.a": "b"}},
		{gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), kind: "CertificateSigningRequest", status: true, more: []string{"approval"},
			manifest: "spec: {request: " + csr + ", signerName: example.com/rt, usages: [digital signature]}",
			defaults: map[string]any{"spec.username": "admin"}},
	}
}
