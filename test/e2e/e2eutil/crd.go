package e2eutil

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CronTabCRD is the CronTab of kube's CRD documentation, with status and
// scale subresources, printer columns and a CEL rule.
const CronTabCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.labelSelector
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= self.maxReplicas"
              message: "replicas must not exceed maxReplicas"
            properties:
              cronSpec:
                type: string
                pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
              image:
                type: string
                default: busybox
              replicas:
                type: integer
                minimum: 0
                maximum: 10
              maxReplicas:
                type: integer
                default: 10
          status:
            type: object
            properties:
              replicas:
                type: integer
              labelSelector:
                type: string
`

func FromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *Env) Dynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// CreateCRD creates a CRD and waits until it is established and its
// resources are in discovery.
func (e *Env) CreateCRD(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	d := e.Dynamic(t)
	crd, err := d.Resource(CRDGVR).Create(Ctx(t), FromYAML(t, doc), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CRD: %v", err)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := versions[0].(map[string]any)["name"].(string)
	disco := discovery.NewDiscoveryClientForConfigOrDie(e.Config)
	Eventually(t, 10*time.Second, "CRD established and discovered", func(c context.Context) (bool, error) {
		got, err := d.Resource(CRDGVR).Get(c, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !HasCondition(got, "Established", "True") {
			return false, nil
		}
		list, err := disco.ServerResourcesForGroupVersion(group + "/" + version)
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == plural {
				return true, nil
			}
		}
		return false, nil
	})
	return crd
}

func HasCondition(crd *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}
