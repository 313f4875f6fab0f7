package catalog

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// invalidCase is a manifest kube refuses, and the causes of its 422.
type invalidCase struct {
	name     string
	gvr      schema.GroupVersionResource
	kind     string
	manifest string
	// objectName is the object's name when the case is about it; the
	// case's name otherwise.
	objectName string
}

func cause(field string, reason metav1.CauseType, message string) metav1.StatusCause {
	return metav1.StatusCause{Field: field, Type: reason, Message: message}
}

// TestValidationCauses sends each resource's most common mistakes and
// compares the 422's causes (field path, reason, message) with kube's, as
// kube-apiserver v1.37.2 gives them for the same manifests.
func TestValidationCauses(t *testing.T) {
	cfg := catalogServer(t)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	namespaced := map[schema.GroupVersionResource]bool{}
	for _, r := range roundtripTable(t) {
		namespaced[r.gvr] = r.namespaced
	}
	for _, tc := range append(invalidTable(), moreInvalid()...) {
		t.Run(tc.gvr.Resource+"/"+tc.name, func(t *testing.T) {
			r := resourceCase{gvr: tc.gvr, kind: tc.kind, manifest: tc.manifest, namespaced: namespaced[tc.gvr]}
			obj := r.object(t, 0)
			obj.SetName(strings.ReplaceAll(tc.name, " ", "-"))
			if tc.objectName != "" {
				obj.SetName(tc.objectName)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(tc.gvr)
			if r.namespaced {
				ri = dyn.Resource(tc.gvr).Namespace(roundtripNamespace)
			}
			_, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v, want 422 Invalid", err)
			}
			got := err.(apierrors.APIStatus).Status().Details.Causes
			key := tc.gvr.Resource + "/" + tc.name
			want, ok := kubeCauses[key]
			if !ok {
				want, ok = moreKubeCauses[key]
			}
			if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
				var b strings.Builder
				for _, c := range got {
					fmt.Fprintf(&b, "\n\t\t\tcause(%q, %q, %q),", c.Field, c.Type, c.Message)
				}
				t.Errorf("causes:%s", b.String())
			}
		})
	}
}

func invalidTable() []invalidCase {
	return []invalidCase{
		{name: "no image", gvr: gvr("", "v1", "pods"), kind: "Pod",
			manifest: "spec: {containers: [{name: app}]}"},
		{name: "duplicate container", gvr: gvr("", "v1", "pods"), kind: "Pod",
			manifest: "spec: {containers: [{name: app, image: nginx}, {name: app, image: nginx}]}"},
		{name: "bad restart policy and port", gvr: gvr("", "v1", "pods"), kind: "Pod",
			manifest: "spec: {restartPolicy: Sometimes, containers: [{name: app, image: nginx, ports: [{containerPort: 70000}]}]}"},

		{name: "no capacity", gvr: gvr("", "v1", "persistentvolumes"), kind: "PersistentVolume",
			manifest: "spec: {accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}"},
		{name: "no access modes", gvr: gvr("", "v1", "persistentvolumes"), kind: "PersistentVolume",
			manifest: "spec: {capacity: {storage: 1Gi}, hostPath: {path: /tmp}}"},
		{name: "no source", gvr: gvr("", "v1", "persistentvolumes"), kind: "PersistentVolume",
			manifest: "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}"},

		{name: "no access modes", gvr: gvr("", "v1", "persistentvolumeclaims"), kind: "PersistentVolumeClaim",
			manifest: "spec: {resources: {requests: {storage: 1Gi}}}"},
		{name: "no storage request", gvr: gvr("", "v1", "persistentvolumeclaims"), kind: "PersistentVolumeClaim",
			manifest: "spec: {accessModes: [ReadWriteOnce]}"},
		{name: "bad access mode", gvr: gvr("", "v1", "persistentvolumeclaims"), kind: "PersistentVolumeClaim",
			manifest: "spec: {accessModes: [ReadWriteSometimes], resources: {requests: {storage: 1Gi}}}"},

		{name: "bad name", objectName: "Bad_Name", gvr: gvr("", "v1", "nodes"), kind: "Node"},
		{name: "bad pod cidr", gvr: gvr("", "v1", "nodes"), kind: "Node", manifest: "spec: {podCIDRs: [10.0.0.0]}"},
		{name: "bad taint", gvr: gvr("", "v1", "nodes"), kind: "Node", manifest: "spec: {taints: [{key: a, effect: Sometimes}]}"},

		{name: "no backend", gvr: gvr("networking.k8s.io", "v1", "ingresses"), kind: "Ingress", manifest: "spec: {}"},
		{name: "no path type", gvr: gvr("networking.k8s.io", "v1", "ingresses"), kind: "Ingress",
			manifest: "spec: {rules: [{http: {paths: [{path: /, backend: {service: {name: web, port: {number: 80}}}}]}}]}"},
		{name: "bad port", gvr: gvr("networking.k8s.io", "v1", "ingresses"), kind: "Ingress",
			manifest: "spec: {defaultBackend: {service: {name: web, port: {number: 70000}}}}"},

		{name: "bad protocol", gvr: gvr("networking.k8s.io", "v1", "networkpolicies"), kind: "NetworkPolicy",
			manifest: "spec: {podSelector: {}, ingress: [{ports: [{protocol: ICMP, port: 80}]}]}"},
		{name: "bad cidr", gvr: gvr("networking.k8s.io", "v1", "networkpolicies"), kind: "NetworkPolicy",
			manifest: "spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.0}}]}]}"},
		{name: "bad policy type", gvr: gvr("networking.k8s.io", "v1", "networkpolicies"), kind: "NetworkPolicy",
			manifest: "spec: {podSelector: {}, policyTypes: [Sideways]}"},

		{name: "no controller", gvr: gvr("networking.k8s.io", "v1", "ingressclasses"), kind: "IngressClass", manifest: "spec: {}"},
		{name: "bad cidr", gvr: gvr("networking.k8s.io", "v1", "servicecidrs"), kind: "ServiceCIDR", manifest: "spec: {cidrs: [10.0.0.0]}"},
		{name: "not an ip", objectName: "not-an-ip", gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), kind: "IPAddress",
			manifest: "spec: {parentRef: {resource: services, name: web, namespace: default}}"},

		{name: "bad address type", gvr: gvr("discovery.k8s.io", "v1", "endpointslices"), kind: "EndpointSlice",
			manifest: "addressType: IPv5\nendpoints: []"},
		{name: "bad address", gvr: gvr("discovery.k8s.io", "v1", "endpointslices"), kind: "EndpointSlice",
			manifest: "addressType: IPv4\nendpoints: [{addresses: [not-an-ip]}]"},
		{name: "no addresses", gvr: gvr("discovery.k8s.io", "v1", "endpointslices"), kind: "EndpointSlice",
			manifest: "addressType: IPv4\nendpoints: [{addresses: []}]"},

		{name: "no provisioner", gvr: gvr("storage.k8s.io", "v1", "storageclasses"), kind: "StorageClass", manifest: "{}"},
		{name: "bad reclaim policy", gvr: gvr("storage.k8s.io", "v1", "storageclasses"), kind: "StorageClass",
			manifest: "provisioner: example.com/rt\nreclaimPolicy: Recycle"},
		{name: "bad binding mode", gvr: gvr("storage.k8s.io", "v1", "storageclasses"), kind: "StorageClass",
			manifest: "provisioner: example.com/rt\nvolumeBindingMode: Later"},
		{name: "no attacher", gvr: gvr("storage.k8s.io", "v1", "volumeattachments"), kind: "VolumeAttachment",
			manifest: "spec: {nodeName: n1, source: {persistentVolumeName: pv1}}"},
		{name: "no source", gvr: gvr("storage.k8s.io", "v1", "volumeattachments"), kind: "VolumeAttachment",
			manifest: "spec: {attacher: example.com, nodeName: n1, source: {}}"},
		{name: "bad fs group policy", gvr: gvr("storage.k8s.io", "v1", "csidrivers"), kind: "CSIDriver",
			manifest: "spec: {fsGroupPolicy: Sometimes}"},

		{name: "both min and max", gvr: gvr("policy", "v1", "poddisruptionbudgets"), kind: "PodDisruptionBudget",
			manifest: "spec: {minAvailable: 1, maxUnavailable: 1}"},
		{name: "negative min", gvr: gvr("policy", "v1", "poddisruptionbudgets"), kind: "PodDisruptionBudget",
			manifest: "spec: {minAvailable: -1}"},
		{name: "over 100 percent", gvr: gvr("policy", "v1", "poddisruptionbudgets"), kind: "PodDisruptionBudget",
			manifest: "spec: {maxUnavailable: 200%}"},

		{name: "too high", gvr: gvr("scheduling.k8s.io", "v1", "priorityclasses"), kind: "PriorityClass", manifest: "value: 2000000000"},
		{name: "system prefix", objectName: "system-mine", gvr: gvr("scheduling.k8s.io", "v1", "priorityclasses"), kind: "PriorityClass", manifest: "value: 1"},
		{name: "bad preemption", gvr: gvr("scheduling.k8s.io", "v1", "priorityclasses"), kind: "PriorityClass",
			manifest: "value: 1\npreemptionPolicy: Sometimes"},

		{name: "no handler", gvr: gvr("node.k8s.io", "v1", "runtimeclasses"), kind: "RuntimeClass", manifest: "{}"},
		{name: "bad handler", gvr: gvr("node.k8s.io", "v1", "runtimeclasses"), kind: "RuntimeClass", manifest: "handler: Bad_Handler"},
		{name: "bad overhead", gvr: gvr("node.k8s.io", "v1", "runtimeclasses"), kind: "RuntimeClass",
			manifest: "handler: rt\noverhead: {podFixed: {cpu: \"-1\"}}"},

		{name: "no request", gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), kind: "CertificateSigningRequest",
			manifest: "spec: {signerName: example.com/rt, usages: [digital signature]}"},
		{name: "no signer", gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), kind: "CertificateSigningRequest",
			manifest: "spec: {request: " + badCSR + ", usages: [digital signature]}"},
		{name: "bad usage", gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), kind: "CertificateSigningRequest",
			manifest: "spec: {request: " + badCSR + ", signerName: example.com/rt, usages: [juggling]}"},
	}
}

// badCSR is base64 of a PEM block that is no certificate request.
const badCSR = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KYWJjZAotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K"

// kubeCauses are the causes of kube-apiserver v1.37.2's 422 for each case
// (by subtest name), recorded with CATALOG_UPSTREAM_KUBECONFIG.
var kubeCauses = map[string][]metav1.StatusCause{
	"pods/no image": {
		cause("spec.containers[0].image", "FieldValueRequired", "Required value"),
	},
	"pods/duplicate container": {
		cause("spec.containers[1].name", "FieldValueDuplicate", "Duplicate value: \"app\""),
	},
	"pods/bad restart policy and port": {
		cause("spec.containers[0].ports[0].containerPort", "FieldValueInvalid", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
		cause("spec.restartPolicy", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""),
	},
	"persistentvolumes/no capacity": {
		cause("spec.capacity", "FieldValueRequired", "Required value"),
		cause("spec.capacity", "FieldValueNotSupported", "Unsupported value: null: supported values: \"storage\""),
	},
	"persistentvolumes/no access modes": {
		cause("spec.accessModes", "FieldValueRequired", "Required value"),
	},
	"persistentvolumes/no source": {
		cause("spec", "FieldValueRequired", "Required value: must specify a volume type"),
	},
	"persistentvolumeclaims/no access modes": {
		cause("spec.accessModes", "FieldValueRequired", "Required value: at least 1 access mode is required"),
	},
	"persistentvolumeclaims/no storage request": {
		cause("spec.resources[storage]", "FieldValueRequired", "Required value"),
	},
	"persistentvolumeclaims/bad access mode": {
		cause("spec.accessModes", "FieldValueNotSupported", "Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""),
	},
	"nodes/bad name": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
	},
	"nodes/bad pod cidr": {
		cause("spec.podCIDRs[0]", "FieldValueInvalid", "Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
	},
	"nodes/bad taint": {
		cause("metadata.taints[0].effect", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""),
	},
	"ingresses/no backend": {
		cause("spec", "FieldValueInvalid", "Invalid value: null: either `defaultBackend` or `rules` must be specified"),
	},
	"ingresses/no path type": {
		cause("spec.rules[0].http.paths[0].pathType", "FieldValueRequired", "Required value: pathType must be specified"),
	},
	"ingresses/bad port": {
		cause("spec.defaultBackend.service.port.number", "FieldValueInvalid", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
	},
	"networkpolicies/bad protocol": {
		cause("spec.ingress[0].ports[0].protocol", "FieldValueNotSupported", "Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\""),
	},
	"networkpolicies/bad cidr": {
		cause("spec.ingress[0].from[0].ipBlock.cidr", "FieldValueInvalid", "Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
	},
	"networkpolicies/bad policy type": {
		cause("spec.policyTypes[0]", "FieldValueNotSupported", "Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""),
	},
	"ingressclasses/no controller": {
		cause("spec.controller", "FieldValueRequired", "Required value"),
	},
	"servicecidrs/bad cidr": {
		cause("spec.cidrs[0]", "FieldValueInvalid", "Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
	},
	"ipaddresses/not an ip": {
		cause("metadata.name", "FieldValueInvalid", "Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
	},
	"endpointslices/bad address type": {
		cause("addressType", "FieldValueNotSupported", "Unsupported value: \"IPv5\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""),
	},
	"endpointslices/bad address": {
		cause("endpoints[0].addresses[0]", "FieldValueInvalid", "Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
	},
	"endpointslices/no addresses": {
		cause("endpoints[0].addresses", "FieldValueRequired", "Required value"),
	},
	"storageclasses/no provisioner": {
		cause("provisioner", "FieldValueRequired", "Required value"),
	},
	"storageclasses/bad reclaim policy": {
		cause("reclaimPolicy", "FieldValueNotSupported", "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""),
	},
	"storageclasses/bad binding mode": {
		cause("volumeBindingMode", "FieldValueNotSupported", "Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\""),
	},
	"volumeattachments/no attacher": {
		cause("spec.attacher", "FieldValueRequired", "Required value"),
	},
	"volumeattachments/no source": {
		cause("spec.source", "FieldValueRequired", "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"),
	},
	"csidrivers/bad fs group policy": {
		cause("spec.fsGroupPolicy", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\""),
	},
	"poddisruptionbudgets/both min and max": {
		cause("spec", "FieldValueInvalid", "Invalid value: {\"MinAvailable\":1,\"Selector\":null,\"MaxUnavailable\":1,\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set"),
	},
	"poddisruptionbudgets/negative min": {
		cause("spec.minAvailable", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
	},
	"poddisruptionbudgets/over 100 percent": {
		cause("spec.maxUnavailable", "FieldValueInvalid", "Invalid value: \"200%\": must not be greater than 100%"),
	},
	"priorityclasses/too high": {
		cause("value", "FieldValueForbidden", "Forbidden: maximum allowed value of a user defined priority is 1000000000"),
	},
	"priorityclasses/system prefix": {
		cause("metadata.name", "FieldValueForbidden", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"),
	},
	"priorityclasses/bad preemption": {
		cause("preemptionPolicy", "FieldValueNotSupported", "Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""),
	},
	"runtimeclasses/no handler": {
		cause("handler", "FieldValueRequired", "Required value"),
	},
	"runtimeclasses/bad handler": {
		cause("handler", "FieldValueInvalid", "Invalid value: \"Bad_Handler\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
	},
	"runtimeclasses/bad overhead": {
		cause("overhead.limits[cpu]", "FieldValueInvalid", "Invalid value: \"-1\": must be greater than or equal to 0"),
	},
	"certificatesigningrequests/no request": {
		cause("spec.request", "FieldValueInvalid", "Invalid value: null: PEM block type must be CERTIFICATE REQUEST"),
	},
	"certificatesigningrequests/no signer": {
		cause("spec.request", "FieldValueInvalid", "Invalid value: \"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KYWJjZAotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K\": asn1: syntax error: truncated tag or length"),
		cause("spec.signerName", "FieldValueRequired", "Required value"),
	},
	"certificatesigningrequests/bad usage": {
		cause("spec.request", "FieldValueInvalid", "Invalid value: \"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KYWJjZAotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K\": asn1: syntax error: truncated tag or length"),
		cause("spec.usages[0]", "FieldValueNotSupported", "Unsupported value: \"juggling\": supported values: \"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", \"timestamping\""),
	},
}
