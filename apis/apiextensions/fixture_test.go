package apiextensions_test

// fullCRD uses every part of the API: webhook conversion, several versions,
// printer columns, selectable fields, subresources, and a schema with
// properties, items, additionalProperties as a boolean and as a schema,
// defaults, enums, examples, x-kubernetes-* extensions and CEL rules.
const fullCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {
    "name": "widgets.example.com",
    "annotations": {"api-approved.kubernetes.io": "unapproved, testing"},
    "finalizers": ["customresourcecleanup.apiextensions.k8s.io"]
  },
  "spec": {
    "group": "example.com",
    "names": {
      "plural": "widgets",
      "singular": "widget",
      "shortNames": ["wg"],
      "kind": "Widget",
      "listKind": "WidgetList",
      "categories": ["all"]
    },
    "scope": "Namespaced",
    "versions": [
      {
        "name": "v1beta1",
        "served": true,
        "storage": false,
        "deprecated": true,
        "deprecationWarning": "use v1",
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
      },
      {
        "name": "v1",
        "served": true,
        "storage": true,
        "schema": {
          "openAPIV3Schema": {
            "type": "object",
            "description": "A widget.",
            "required": ["spec"],
            "x-kubernetes-validations": [
              {"rule": "self.spec.replicas <= self.spec.maxReplicas", "message": "too many", "reason": "FieldValueForbidden", "fieldPath": ".spec.replicas"},
              {"rule": "oldSelf.hasValue()", "messageExpression": "'x' + 'y'", "optionalOldSelf": true}
            ],
            "properties": {
              "apiVersion": {"type": "string"},
              "kind": {"type": "string"},
              "metadata": {"type": "object"},
              "spec": {
                "type": "object",
                "properties": {
                  "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 100, "exclusiveMaximum": true, "default": 1, "multipleOf": 1},
                  "maxReplicas": {"type": "integer", "default": 10},
                  "ratio": {"type": "number", "default": 0.5, "example": 0.25},
                  "mode": {"type": "string", "enum": ["Fast", "Slow", null], "nullable": true, "default": "Fast", "pattern": "^[A-Z]", "minLength": 1, "maxLength": 10},
                  "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                  "labels": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic", "maxProperties": 5, "minProperties": 0},
                  "free": {"type": "object", "additionalProperties": true},
                  "closed": {"type": "object", "additionalProperties": false},
                  "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                  "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "protocol"],
                    "maxItems": 8,
                    "minItems": 0,
                    "items": {
                      "type": "object",
                      "required": ["name"],
                      "properties": {
                        "name": {"type": "string"},
                        "protocol": {"type": "string", "default": "TCP", "enum": ["TCP", "UDP"]},
                        "config": {"type": "object", "default": {"a": [1, 2.5, "x", true, null], "b": {}}}
                      }
                    }
                  },
                  "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "uniqueItems": true},
                  "tuple": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                  "choice": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["c"]}, "allOf": [{"minProperties": 1}]}
                }
              },
              "status": {
                "type": "object",
                "properties": {
                  "replicas": {"type": "integer"},
                  "selector": {"type": "string"}
                }
              }
            }
          }
        },
        "subresources": {
          "status": {},
          "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}
        },
        "additionalPrinterColumns": [
          {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "description": "wanted", "priority": 1},
          {"name": "Age", "type": "date", "format": "date-time", "jsonPath": ".metadata.creationTimestamp"}
        ],
        "selectableFields": [{"jsonPath": ".spec.mode"}]
      }
    ],
    "conversion": {
      "strategy": "Webhook",
      "webhook": {
        "clientConfig": {
          "service": {"namespace": "default", "name": "conv", "path": "/convert", "port": 8443},
          "caBundle": "Y2EtYnVuZGxl"
        },
        "conversionReviewVersions": ["v1", "v1beta1"]
      }
    }
  },
  "status": {
    "conditions": [
      {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "NoConflicts", "message": "no conflicts found"},
      {"type": "Established", "status": "True", "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "observedGeneration": 2}
    ],
    "acceptedNames": {"plural": "widgets", "singular": "widget", "shortNames": ["wg"], "kind": "Widget", "listKind": "WidgetList", "categories": ["all"]},
    "storedVersions": ["v1"],
    "observedGeneration": 2
  }
}`
