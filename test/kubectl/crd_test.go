package kubectl

import (
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
`

const widget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
  color: blue
  ports:
  - {name: http, port: 80}
`

// TestCustomResourcesWithKubectl: kubectl applies a CRD, waits for it,
// and then gets, applies (client- and server-side) and deletes its objects
// as it does built-in ones, printing the CRD's columns.
func TestCustomResourcesWithKubectl(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	mustContain(t, run(t, s, widgetCRD, "apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created")
	run(t, s, "", "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s")
	mustContain(t, run(t, s, "", "get", "crd"), "NAME", "CREATED AT", "widgets.example.com")

	mustContain(t, run(t, s, widget, "apply", "--server-side", "-f", "-"), "widget.example.com/w1 serverside-applied")
	mustContain(t, run(t, s, "", "get", "widgets"), "NAME", "SIZE", "COLOR", "w1", "3", "blue")
	mustContain(t, run(t, s, "", "get", "wd", "w1", "-o", "jsonpath={.spec.color}"), "blue")
	mustContain(t, run(t, s, "", "api-resources", "--api-group=example.com"), "widgets", "wd", "example.com/v1", "true", "Widget")

	// A second manager adds a port by server-side apply: the list is a map
	// keyed by name, so both ports stay.
	ports := `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  ports:
  - {name: https, port: 443}
`
	mustContain(t, run(t, s, ports, "apply", "--server-side", "--field-manager=tls", "-f", "-"), "widget.example.com/w1 serverside-applied")
	mustContain(t, run(t, s, "", "get", "widget", "w1", "-o", "jsonpath={.spec.ports[*].name}"), "http https")
	mustContain(t, run(t, s, "", "get", "widget", "w1", "-o", "yaml", "--show-managed-fields"), "manager: tls", "operation: Apply")

	mustContain(t, run(t, s, "", "delete", "widget", "w1"), `widget.example.com "w1" deleted`)
	mustContain(t, run(t, s, "", "delete", "crd", "widgets.example.com"), `customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted`)
	errOut := fail(t, s, "get", "widgets")
	mustContain(t, errOut, `the server doesn't have a resource type "widgets"`)
}
