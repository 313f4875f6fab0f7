package catalog

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The cases below cover the rest of the catalog: core, apps, batch and
// autoscaling resources and the second and third mistakes of the
// networking and storage ones.

const (
	unlabeled = `template: {metadata: {labels: {app: other}}, spec: {containers: [{name: app, image: nginx}]}}`
)

func moreInvalid() []invalidCase {
	core := func(resource, kind, name, manifest string) invalidCase {
		return invalidCase{name: name, gvr: gvr("", "v1", resource), kind: kind, manifest: manifest}
	}
	apps := func(resource, kind, name, manifest string) invalidCase {
		return invalidCase{name: name, gvr: gvr("apps", "v1", resource), kind: kind, manifest: manifest}
	}
	of := func(group, version, resource, kind, name, manifest string) invalidCase {
		return invalidCase{name: name, gvr: gvr(group, version, resource), kind: kind, manifest: manifest}
	}
	return []invalidCase{
		core("services", "Service", "port out of range", "spec: {ports: [{port: 70000}]}"),
		core("services", "Service", "unnamed ports", "spec: {ports: [{port: 80}, {port: 81}]}"),
		core("services", "Service", "bad type", "spec: {type: Sideways, ports: [{port: 80}]}"),
		core("services", "Service", "bad cluster ip", "spec: {clusterIP: abc, ports: [{port: 80}]}"),

		core("endpoints", "Endpoints", "bad ip", "subsets: [{addresses: [{ip: abc}], ports: [{port: 80}]}]"),
		core("endpoints", "Endpoints", "port out of range", "subsets: [{addresses: [{ip: 10.1.2.3}], ports: [{port: 70000}]}]"),
		core("endpoints", "Endpoints", "bad protocol", "subsets: [{addresses: [{ip: 10.1.2.3}], ports: [{port: 80, protocol: ICMP}]}]"),

		core("replicationcontrollers", "ReplicationController", "selector mismatch", "spec: {selector: {app: rt}, "+unlabeled+"}"),
		core("replicationcontrollers", "ReplicationController", "negative replicas", "spec: {replicas: -1, selector: {app: other}, "+unlabeled+"}"),
		core("replicationcontrollers", "ReplicationController", "no template", "spec: {selector: {app: rt}}"),

		core("podtemplates", "PodTemplate", "no containers", "template: {spec: {containers: []}}"),
		core("podtemplates", "PodTemplate", "bad label", "template: {metadata: {labels: {'a b': c}}, spec: {containers: [{name: app, image: nginx}]}}"),
		core("podtemplates", "PodTemplate", "bad dns policy", "template: {spec: {dnsPolicy: Sometimes, containers: [{name: app, image: nginx}]}}"),

		core("limitranges", "LimitRange", "bad type", "spec: {limits: [{type: Cluster, max: {cpu: \"1\"}}]}"),
		core("limitranges", "LimitRange", "min above max", "spec: {limits: [{type: Container, max: {cpu: \"1\"}, min: {cpu: \"2\"}}]}"),
		core("limitranges", "LimitRange", "default above max", "spec: {limits: [{type: Container, max: {cpu: \"1\"}, default: {cpu: \"2\"}}]}"),

		core("resourcequotas", "ResourceQuota", "negative", "spec: {hard: {pods: \"-1\"}}"),
		core("resourcequotas", "ResourceQuota", "bad resource", "spec: {hard: {'foo bar': \"1\"}}"),
		core("resourcequotas", "ResourceQuota", "bad scope", "spec: {hard: {pods: \"1\"}, scopes: [Sometimes]}"),

		core("configmaps", "ConfigMap", "bad key", "data: {'a b': c}"),
		core("configmaps", "ConfigMap", "key in both", "data: {a: b}\nbinaryData: {a: Yg==}"),
		core("configmaps", "ConfigMap", "dot key", "data: {'..': c}"),

		core("secrets", "Secret", "bad key", "stringData: {'a b': c}"),
		core("secrets", "Secret", "docker config missing", "type: kubernetes.io/dockerconfigjson\nstringData: {a: b}"),
		core("secrets", "Secret", "tls missing", "type: kubernetes.io/tls\nstringData: {tls.crt: x}"),

		{name: "bad name", objectName: "Bad_Name", gvr: gvr("", "v1", "serviceaccounts"), kind: "ServiceAccount"},
		core("serviceaccounts", "ServiceAccount", "bad label", "metadata: {labels: {'a b': c}}"),
		core("serviceaccounts", "ServiceAccount", "bad annotation", "metadata: {annotations: {'a b': c}}"),

		core("events", "Event", "namespace mismatch", "involvedObject: {kind: Pod, name: web, namespace: other}\nreason: Started"),
		core("events", "Event", "bad label", "metadata: {labels: {'a b': c}}\ninvolvedObject: {kind: Pod, name: web, namespace: "+roundtripNamespace+"}"),
		core("events", "Event", "event time without reporter", "involvedObject: {kind: Pod, name: web, namespace: "+roundtripNamespace+"}\nreason: r\neventTime: \"2026-01-01T00:00:00.000000Z\""),

		apps("deployments", "Deployment", "selector mismatch", "spec: {selector: {matchLabels: {app: rt}}, "+unlabeled+"}"),
		apps("deployments", "Deployment", "negative replicas", "spec: {replicas: -1, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("deployments", "Deployment", "recreate with rolling update", "spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("deployments", "Deployment", "bad strategy", "spec: {strategy: {type: Sometimes}, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("statefulsets", "StatefulSet", "bad update strategy", "spec: {updateStrategy: {type: Sometimes}, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("replicasets", "ReplicaSet", "selector mismatch", "spec: {selector: {matchLabels: {app: rt}}, "+unlabeled+"}"),
		apps("replicasets", "ReplicaSet", "no selector", "spec: {"+unlabeled+"}"),
		apps("replicasets", "ReplicaSet", "negative replicas", "spec: {replicas: -1, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("statefulsets", "StatefulSet", "selector mismatch", "spec: {selector: {matchLabels: {app: rt}}, "+unlabeled+"}"),
		apps("statefulsets", "StatefulSet", "bad pod management", "spec: {podManagementPolicy: Sometimes, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("statefulsets", "StatefulSet", "negative replicas", "spec: {replicas: -1, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("daemonsets", "DaemonSet", "selector mismatch", "spec: {selector: {matchLabels: {app: rt}}, "+unlabeled+"}"),
		apps("daemonsets", "DaemonSet", "restart never", "spec: {selector: {matchLabels: {app: other}}, template: {metadata: {labels: {app: other}}, spec: {restartPolicy: Never, containers: [{name: app, image: nginx}]}}}"),
		apps("daemonsets", "DaemonSet", "bad strategy", "spec: {updateStrategy: {type: Sometimes}, selector: {matchLabels: {app: other}}, "+unlabeled+"}"),
		apps("controllerrevisions", "ControllerRevision", "negative revision", "revision: -1"),
		{name: "bad name", objectName: "Bad_Name", gvr: gvr("apps", "v1", "controllerrevisions"), kind: "ControllerRevision", manifest: "revision: 1"},
		apps("controllerrevisions", "ControllerRevision", "bad label", "metadata: {labels: {'a b': c}}\nrevision: 1"),

		of("batch", "v1", "jobs", "Job", "restart always", "spec: {template: {spec: {containers: [{name: app, image: busybox}]}}}"),
		of("batch", "v1", "jobs", "Job", "negative parallelism", "spec: {parallelism: -1, template: {spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}}"),
		of("batch", "v1", "jobs", "Job", "bad completion mode", "spec: {completionMode: Sometimes, template: {spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}}"),
		of("batch", "v1", "cronjobs", "CronJob", "bad schedule", "spec: {schedule: \"every day\", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}}}}"),
		of("batch", "v1", "cronjobs", "CronJob", "restart always", "spec: {schedule: \"@daily\", jobTemplate: {spec: {template: {spec: {containers: [{name: app, image: busybox}]}}}}}"),
		of("batch", "v1", "cronjobs", "CronJob", "bad concurrency", "spec: {schedule: \"@daily\", concurrencyPolicy: Sometimes, jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}}}}"),

		of("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "zero max", "spec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 0}"),
		of("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "min above max", "spec: {scaleTargetRef: {kind: Deployment, name: web}, minReplicas: 5, maxReplicas: 2}"),
		of("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "no target kind", "spec: {scaleTargetRef: {name: web}, maxReplicas: 2}"),
		of("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "v1 zero max", "spec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 0}"),
		of("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "v1 min above max", "spec: {scaleTargetRef: {kind: Deployment, name: web, apiVersion: apps/v1}, minReplicas: 5, maxReplicas: 2}"),
		of("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "v1 bad target percentage", "spec: {scaleTargetRef: {kind: Deployment, name: web, apiVersion: apps/v1}, maxReplicas: 2, targetCPUUtilizationPercentage: -1}"),

		of("networking.k8s.io", "v1", "ingressclasses", "IngressClass", "bad controller", "spec: {controller: 'Bad Controller'}"),
		of("networking.k8s.io", "v1", "ingressclasses", "IngressClass", "parameters without kind", "spec: {controller: example.com/x, parameters: {name: p}}"),
		of("networking.k8s.io", "v1", "ingressclasses", "IngressClass", "namespace scope without namespace", "spec: {controller: example.com/x, parameters: {kind: P, name: p, scope: Namespace}}"),
		of("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", "no cidrs", "spec: {cidrs: []}"),
		of("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", "not canonical", "spec: {cidrs: [10.0.0.1/24]}"),
		of("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", "two of a family", "spec: {cidrs: [10.0.0.0/24, 10.1.0.0/24]}"),
		{name: "no parent", objectName: "10.9.9.9", gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), kind: "IPAddress", manifest: "spec: {}"},
		{name: "not canonical", objectName: "2001:db8::0001", gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), kind: "IPAddress",
			manifest: "spec: {parentRef: {resource: services, name: web, namespace: default}}"},
		{name: "parent without name", objectName: "10.9.9.8", gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), kind: "IPAddress",
			manifest: "spec: {parentRef: {resource: services, namespace: default}}"},

		of("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", "no node", "spec: {attacher: example.com, source: {persistentVolumeName: pv1}}"),
		{name: "bad name", objectName: "Bad_Driver", gvr: gvr("storage.k8s.io", "v1", "csidrivers"), kind: "CSIDriver", manifest: "spec: {}"},
		of("storage.k8s.io", "v1", "csidrivers", "CSIDriver", "bad lifecycle mode", "spec: {volumeLifecycleModes: [Sometimes]}"),
		of("storage.k8s.io", "v1", "csidrivers", "CSIDriver", "duplicate audience", "spec: {tokenRequests: [{audience: a}, {audience: a}]}"),
		of("storage.k8s.io", "v1", "csinodes", "CSINode", "bad driver name", "spec: {drivers: [{name: Bad_Driver, nodeID: n1}]}"),
		of("storage.k8s.io", "v1", "csinodes", "CSINode", "duplicate driver", "spec: {drivers: [{name: example.com, nodeID: n1}, {name: example.com, nodeID: n1}]}"),
		of("storage.k8s.io", "v1", "csinodes", "CSINode", "no node id", "spec: {drivers: [{name: example.com}]}"),
		of("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", "no class", "capacity: 1Gi"),
		of("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", "bad class", "storageClassName: Bad_Class"),
		of("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", "negative capacity", "storageClassName: standard\ncapacity: -1Gi"),
	}
}

// moreKubeCauses are kube-apiserver v1.37.2's causes for moreInvalid,
// recorded as kubeCauses are.
var moreKubeCauses = map[string][]metav1.StatusCause{
	"services/port out of range": {
		cause("spec.ports[0].port", "FieldValueInvalid", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
		cause("spec.ports[0].targetPort", "FieldValueInvalid", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
	},
	"services/unnamed ports": {
		cause("spec.ports[0].name", "FieldValueRequired", "Required value"),
		cause("spec.ports[1].name", "FieldValueRequired", "Required value"),
	},
	"services/bad type": {
		cause("spec.type", "FieldValueNotSupported", "Unsupported value: \"Sideways\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""),
	},
	"services/bad cluster ip": {
		cause("spec.clusterIPs[0]", "FieldValueInvalid", "Invalid value: \"abc\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
	},
	"endpoints/bad ip": {
		cause("subsets[0].addresses[0].ip", "FieldValueInvalid", "Invalid value: \"abc\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
		cause("subsets[0].addresses[0].ip", "FieldValueInvalid", "Invalid value: \"abc\": must be a valid IP address"),
	},
	"endpoints/port out of range": {
		cause("subsets[0].ports[0].port", "FieldValueInvalid", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
	},
	"endpoints/bad protocol": {
		cause("subsets[0].ports[0].protocol", "FieldValueNotSupported", "Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""),
	},
	"replicationcontrollers/selector mismatch": {
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"replicationcontrollers/negative replicas": {
		cause("spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"replicationcontrollers/no template": {
		cause("spec.template", "FieldValueRequired", "Required value"),
	},
	"podtemplates/no containers": {
		cause("template.spec.containers", "FieldValueRequired", "Required value"),
	},
	"podtemplates/bad label": {
		cause("template.labels", "FieldValueInvalid", "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
	},
	"podtemplates/bad dns policy": {
		cause("template.spec.dnsPolicy", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""),
	},
	"limitranges/bad type": {
		cause("spec.limits[0].type", "FieldValueInvalid", "Invalid value: \"Cluster\": must be a standard limit type or fully qualified"),
	},
	"limitranges/min above max": {
		cause("spec.limits[0].min[cpu]", "FieldValueInvalid", "Invalid value: \"2\": min value 2 is greater than max value 1"),
		cause("spec.limits[0].defaultRequest[cpu]", "FieldValueInvalid", "Invalid value: \"1\": min value 2 is greater than default request value 1"),
		cause("spec.limits[0].default[cpu]", "FieldValueInvalid", "Invalid value: \"2\": min value 2 is greater than default value 1"),
	},
	"limitranges/default above max": {
		cause("spec.limits[0].defaultRequest[cpu]", "FieldValueInvalid", "Invalid value: \"2\": default request value 2 is greater than max value 1"),
		cause("spec.limits[0].default[cpu]", "FieldValueInvalid", "Invalid value: \"1\": default value 2 is greater than max value 1"),
	},
	"resourcequotas/negative": {
		cause("spec.hard[pods]", "FieldValueInvalid", "Invalid value: \"-1\": must be greater than or equal to 0"),
	},
	"resourcequotas/bad resource": {
		cause("spec.hard[foo bar]", "FieldValueInvalid", "Invalid value: \"foo bar\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
		cause("spec.hard[foo bar]", "FieldValueInvalid", "Invalid value: \"foo bar\": must be a standard resource for quota"),
	},
	"resourcequotas/bad scope": {
		cause("spec.scopes", "FieldValueInvalid", "Invalid value: [\"Sometimes\"]: unsupported scope"),
	},
	"configmaps/bad key": {
		cause("data[a b]", "FieldValueInvalid", "Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"),
	},
	"configmaps/key in both": {
		cause("data[a]", "FieldValueInvalid", "Invalid value: \"a\": duplicate of key present in binaryData"),
	},
	"configmaps/dot key": {
		cause("data[..]", "FieldValueInvalid", "Invalid value: \"..\": must not be '..'"),
	},
	"secrets/bad key": {
		cause("data[a b]", "FieldValueInvalid", "Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"),
	},
	"secrets/docker config missing": {
		cause("data[.dockerconfigjson]", "FieldValueRequired", "Required value"),
	},
	"secrets/tls missing": {
		cause("data[tls.key]", "FieldValueRequired", "Required value"),
	},
	"serviceaccounts/bad name": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"serviceaccounts/bad label": {
		cause("metadata.labels", "FieldValueInvalid", "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
	},
	"serviceaccounts/bad annotation": {
		cause("metadata.annotations", "FieldValueInvalid", "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
	},
	"events/namespace mismatch": {
		cause("involvedObject.namespace", "FieldValueInvalid", "Invalid value: \"other\": does not match event.namespace"),
	},
	"events/bad label": {
		cause("metadata.labels", "FieldValueInvalid", "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
	},
	"events/event time without reporter": {
		cause("reportingComponent", "FieldValueRequired", "Required value"),
		cause("reportingComponent", "FieldValueInvalid", "Invalid value: \"\": name part must be non-empty"),
		cause("reportingComponent", "FieldValueInvalid", "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
		cause("reportingInstance", "FieldValueRequired", "Required value"),
		cause("action", "FieldValueRequired", "Required value"),
	},
	"deployments/selector mismatch": {
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"deployments/negative replicas": {
		cause("spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"deployments/recreate with rolling update": {
		cause("spec.strategy.rollingUpdate", "FieldValueForbidden", "Forbidden: may not be specified when strategy `type` is 'Recreate'"),
	},
	"replicasets/selector mismatch": {
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"replicasets/no selector": {
		cause("spec.selector", "FieldValueRequired", "Required value"),
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"replicasets/negative replicas": {
		cause("spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"statefulsets/selector mismatch": {
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"statefulsets/bad pod management": {
		cause("spec.podManagementPolicy", "FieldValueInvalid", "Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"),
	},
	"statefulsets/negative replicas": {
		cause("spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"daemonsets/selector mismatch": {
		cause("spec.template.metadata.labels", "FieldValueInvalid", "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
	},
	"daemonsets/restart never": {
		cause("spec.template.spec.restartPolicy", "FieldValueNotSupported", "Unsupported value: \"Never\": supported values: \"Always\""),
	},
	"deployments/bad strategy": {
		cause("spec.strategy", "FieldValueNotSupported", "Unsupported value: {\"Type\":\"Sometimes\",\"RollingUpdate\":null}: supported values: \"Recreate\", \"RollingUpdate\""),
	},
	"statefulsets/bad update strategy": {
		cause("spec.updateStrategy", "FieldValueInvalid", "Invalid value: {\"Type\":\"Sometimes\",\"RollingUpdate\":null}: must be 'RollingUpdate' or 'OnDelete'"),
	},
	"daemonsets/bad strategy": {
		cause("spec.updateStrategy", "FieldValueNotSupported", "Unsupported value: {\"Type\":\"Sometimes\",\"RollingUpdate\":null}: supported values: \"RollingUpdate\", \"OnDelete\""),
	},
	"controllerrevisions/negative revision": {
		cause("revision", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
		cause("data", "FieldValueRequired", "Required value: data is mandatory"),
	},
	"jobs/restart always": {
		cause("spec.template.spec.restartPolicy", "FieldValueRequired", "Required value: valid values: \"OnFailure\", \"Never\""),
	},
	"jobs/negative parallelism": {
		cause("spec.parallelism", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"jobs/bad completion mode": {
		cause("spec.completionMode", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\""),
	},
	"cronjobs/bad schedule": {
		cause("spec.schedule", "FieldValueInvalid", "Invalid value: \"every day\": expected exactly 5 fields, found 2: [every day]"),
	},
	"cronjobs/restart always": {
		cause("spec.jobTemplate.spec.template.spec.restartPolicy", "FieldValueRequired", "Required value: valid values: \"OnFailure\", \"Never\""),
	},
	"cronjobs/bad concurrency": {
		cause("spec.concurrencyPolicy", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""),
	},
	"horizontalpodautoscalers/zero max": {
		cause("spec.maxReplicas", "FieldValueInvalid", "Invalid value: 0: must be greater than or equal to `minReplicas`"),
		cause("spec.scaleTargetRef.apiVersion", "FieldValueInvalid", "Invalid value: \"\": apiVersion must specify API group"),
		cause("spec.maxReplicas", "FieldValueRequired", "Required value"),
	},
	"horizontalpodautoscalers/min above max": {
		cause("spec.maxReplicas", "FieldValueInvalid", "Invalid value: 2: must be greater than or equal to `minReplicas`"),
		cause("spec.scaleTargetRef.apiVersion", "FieldValueInvalid", "Invalid value: \"\": apiVersion must specify API group"),
	},
	"horizontalpodautoscalers/no target kind": {
		cause("spec.scaleTargetRef.kind", "FieldValueRequired", "Required value"),
		cause("spec.scaleTargetRef.apiVersion", "FieldValueInvalid", "Invalid value: \"\": apiVersion must specify API group"),
	},
	"horizontalpodautoscalers/v1 zero max": {
		cause("spec.maxReplicas", "FieldValueInvalid", "Invalid value: 0: must be greater than or equal to `minReplicas`"),
		cause("spec.scaleTargetRef.apiVersion", "FieldValueInvalid", "Invalid value: \"\": apiVersion must specify API group"),
		cause("spec.maxReplicas", "FieldValueRequired", "Required value"),
	},
	"ingressclasses/bad controller": {
		cause("spec.controller", "FieldValueInvalid", "Invalid value: \"Bad Controller\": must be a domain-prefixed path (such as \"acme.io/foo\")"),
	},
	"ingressclasses/parameters without kind": {
		cause("spec.parameters.kind", "FieldValueRequired", "Required value"),
	},
	"ingressclasses/namespace scope without namespace": {
		cause("spec.parameters.namespace", "FieldValueRequired", "Required value: `parameters.scope` is set to 'Namespace'"),
	},
	"servicecidrs/no cidrs": {
		cause("spec.cidrs", "FieldValueRequired", "Required value: at least one CIDR required"),
	},
	"servicecidrs/not canonical": {
		cause("spec.cidrs[0]", "FieldValueInvalid", "Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length"),
	},
	"servicecidrs/two of a family": {
		cause("spec.cidrs", "FieldValueInvalid", "Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"),
	},
	"ipaddresses/no parent": {
		cause("spec.parentRef", "FieldValueRequired", "Required value"),
	},
	"ipaddresses/not canonical": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"2001:db8::0001\": must be in canonical form (\"2001:db8::1\")"),
	},
	"ipaddresses/parent without name": {
		cause("spec.parentRef.name", "FieldValueRequired", "Required value"),
	},
	"volumeattachments/no node": {
		cause("spec.nodeName", "FieldValueInvalid", "Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"csidrivers/bad name": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"csidrivers/bad lifecycle mode": {
		cause("spec.volumeLifecycleModes", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"Persistent\", \"Ephemeral\""),
	},
	"csidrivers/duplicate audience": {
		cause("spec.tokenRequests[1].audience", "FieldValueDuplicate", "Duplicate value: \"a\""),
	},
	"csinodes/bad driver name": {
		cause("spec.drivers[0].name", "FieldValueInvalid", "Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"csinodes/duplicate driver": {
		cause("spec.drivers[1].name", "FieldValueDuplicate", "Duplicate value: \"example.com\""),
	},
	"csinodes/no node id": {
		cause("spec.drivers[0].nodeID", "FieldValueRequired", "Required value"),
	},
	"csistoragecapacities/no class": {
		cause("storageClassName", "FieldValueInvalid", "Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"csistoragecapacities/bad class": {
		cause("storageClassName", "FieldValueInvalid", "Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"csistoragecapacities/negative capacity": {
		cause("capacity", "FieldValueInvalid", "Invalid value: \"-1Gi\": must be greater than or equal to 0"),
	},
	"controllerrevisions/bad name": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
		cause("data", "FieldValueRequired", "Required value: data is mandatory"),
	},
	"controllerrevisions/bad label": {
		cause("metadata.labels", "FieldValueInvalid", "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
		cause("data", "FieldValueRequired", "Required value: data is mandatory"),
	},
	"horizontalpodautoscalers/v1 min above max": {
		cause("spec.maxReplicas", "FieldValueInvalid", "Invalid value: 2: must be greater than or equal to `minReplicas`"),
	},
	"horizontalpodautoscalers/v1 bad target percentage": {
		cause("spec.metrics[0].resource.target.averageUtilization", "FieldValueInvalid", "Invalid value: -1: must be greater than 0"),
	},
}
