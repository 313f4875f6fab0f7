package loadtest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdRunLabel marks the CRDs of one run, for the informer that waits for
// them and for their deletion.
const crdRunLabel = "capstan-load/run"

// crdVersion is the one version every CRD of the workload serves.
const crdVersion = "v1"

// crdSpec names the i-th CRD of a run and its custom resources.
type crdSpec struct {
	Name, Group, Kind, Plural string
}

// crdSpecFor is CRD i of a run whose CRDs are spread over groups groups
// (0: a group each).
func crdSpecFor(runID string, i, groups int) crdSpec {
	g := i
	if groups > 0 {
		g = i % groups
	}
	s := crdSpec{
		Group:  fmt.Sprintf("g%04d.%s.example.com", g, runID),
		Kind:   fmt.Sprintf("Widget%04d", i),
		Plural: fmt.Sprintf("widget%04ds", i),
	}
	s.Name = s.Plural + "." + s.Group
	return s
}

// GVR is the resource of the CRD's custom resources.
func (s crdSpec) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: s.Group, Version: crdVersion, Resource: s.Plural}
}

// crdObject is a small namespaced CRD such as operators install: one
// version with the status subresource, printer columns, and a structural
// schema of about ten fields of spec and four of status, with defaults,
// enums, bounds, a map list and a map.
func crdObject(s crdSpec, runID string) *unstructured.Unstructured {
	str := func() map[string]any { return map[string]any{"type": "string"} }
	obj := func(props map[string]any, required ...string) map[string]any {
		o := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			r := make([]any, len(required))
			for i, x := range required {
				r[i] = x
			}
			o["required"] = r
		}
		return o
	}
	spec := obj(map[string]any{
		"image":          map[string]any{"type": "string", "minLength": int64(1), "description": "The container image to run."},
		"replicas":       map[string]any{"type": "integer", "format": "int32", "minimum": int64(0), "default": int64(1)},
		"paused":         map[string]any{"type": "boolean"},
		"mode":           map[string]any{"type": "string", "enum": []any{"Auto", "Manual"}, "default": "Auto"},
		"schedule":       map[string]any{"type": "string", "maxLength": int64(64)},
		"timeoutSeconds": map[string]any{"type": "integer", "format": "int64", "minimum": int64(1)},
		"command":        map[string]any{"type": "array", "items": str()},
		"env": map[string]any{
			"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
			"items": obj(map[string]any{"name": str(), "value": str()}, "name"),
		},
		"resources":    obj(map[string]any{"cpu": str(), "memory": str()}),
		"nodeSelector": map[string]any{"type": "object", "additionalProperties": str()},
	}, "image")
	// Every CRD's schema is its own, as operators' are: no server can
	// share one CRD's schema with another's.
	spec["description"] = fmt.Sprintf("%sSpec is the desired state of a %s.", s.Kind, s.Kind)
	status := obj(map[string]any{
		"phase":              map[string]any{"type": "string", "enum": []any{"Pending", "Running", "Failed"}},
		"readyReplicas":      map[string]any{"type": "integer", "format": "int32"},
		"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
		"conditions": map[string]any{
			"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
			"items": obj(map[string]any{
				"type": str(), "status": map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
				"reason": str(), "message": str(),
				"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
			}, "type", "status"),
		},
	})
	root := obj(map[string]any{
		"apiVersion": str(), "kind": str(), "metadata": map[string]any{"type": "object"},
		"spec": spec, "status": status,
	})
	root["description"] = fmt.Sprintf("A %s of group %s, made by capstan-load.", s.Kind, s.Group)
	column := func(name, typ, path string) map[string]any {
		return map[string]any{"name": name, "type": typ, "jsonPath": path}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   s.Name,
			"labels": map[string]any{crdRunLabel: runID},
		},
		"spec": map[string]any{
			"group": s.Group,
			"scope": "Namespaced",
			"names": map[string]any{
				"kind": s.Kind, "listKind": s.Kind + "List", "plural": s.Plural, "singular": s.Plural[:len(s.Plural)-1],
				"categories": []any{"capstan-load"},
			},
			"versions": []any{map[string]any{
				"name": crdVersion, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": []any{
					column("Image", "string", ".spec.image"), column("Replicas", "integer", ".spec.replicas"),
					column("Phase", "string", ".status.phase"), column("Age", "date", ".metadata.creationTimestamp"),
				},
				"schema": map[string]any{"openAPIV3Schema": root},
			}},
		},
	}}
}

// crObject is a custom resource of the CRD s named name in ns.
func crObject(s crdSpec, ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": s.Group + "/" + crdVersion,
		"kind":       s.Kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"image": "registry.example.com/app:1.0", "replicas": int64(2), "mode": "Auto",
			"command":   []any{"/app", "--serve"},
			"env":       []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}},
			"resources": map[string]any{"cpu": "100m", "memory": "64Mi"},
		},
	}}
}
