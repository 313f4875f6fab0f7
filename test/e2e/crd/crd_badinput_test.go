package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// jsonOf turns a YAML document into JSON.
func jsonOf(t *testing.T, doc string) []byte {
	t.Helper()
	out, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantPlainNotFound checks kube's answer for a path no server serves: Go's
// plain-text 404, which kube's CRD handler leaves to its delegate.
func wantPlainNotFound(t *testing.T, r e2eutil.Response) {
	t.Helper()
	if r.Code != http.StatusNotFound || string(r.Body) != "404 page not found\n" ||
		r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("answer = %d %q (%s), want kube's plain 404 page not found", r.Code, r.Body, r.Header.Get("Content-Type"))
	}
}

// badCRD is a CRD of group bad.example.com whose spec.versions is versions
// (YAML indented by two spaces).
func badCRD(versions string) string {
	return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.bad.example.com}
spec:
  group: bad.example.com
  scope: Namespaced
  names: {plural: foos, singular: foo, kind: Foo}
  versions:
` + versions
}

const costMessage = "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

// TestCRDInvalidDefinitions: CRDs kube refuses are refused with kube's 422,
// messages and field paths (those of kube's internal form, where a schema
// every version shares sits at spec.validation), and nothing is stored.
func TestCRDInvalidDefinitions(t *testing.T) {
	e := e2eutil.Start(t)
	const prefix = `CustomResourceDefinition.apiextensions.k8s.io "foos.bad.example.com" is invalid: `
	for _, tt := range []struct {
		name, versions, message string
		causes                  []metav1.StatusCause
	}{
		{"non-structural", `
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              x: {type: string}
`, prefix + "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
			[]metav1.StatusCause{{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.validation.openAPIV3Schema.properties[spec].type",
				Message: "Required value: must not be empty for specified object fields"}}},
		// kube prints the versions as its internal type encodes them: Go
		// field names, and the schema they share moved out (null).
		{"two storage versions", `
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`, prefix + `[spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v2","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version, status.storedVersions: Invalid value: ["v1"]: must have the storage version v2]`,
			[]metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.versions"},
				{Type: metav1.CauseTypeFieldValueInvalid, Field: "status.storedVersions", Message: `Invalid value: ["v1"]: must have the storage version v2`}}},
		{"CEL rule that does not compile", `
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= "
            properties:
              replicas: {type: integer}
`, prefix + `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.replicas \u003c= ","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:18: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}` +
			"\n | self.replicas <= \n | .................^",
			[]metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"}}},
		// The example of kube's documentation: strings without maxLength in
		// a list without maxItems.
		{"CEL rule too expensive", `
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              foo:
                type: array
                items:
                  type: string
                x-kubernetes-validations:
                - rule: "self.all(x, x.contains('a string'))"
`, prefix + "[spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: " + costMessage +
			", spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema" +
			", spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)]",
			[]metav1.StatusCause{
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Field: "spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule", Message: "Forbidden: " + costMessage},
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Field: "spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule"},
				{Type: metav1.CauseType(field.ErrorTypeForbidden), Field: "spec.validation.openAPIV3Schema"},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Do(t, http.MethodPost, crdsPath, jsonOf(t, badCRD(tt.versions)))
			s := r.WantStatus(t, 422, metav1.StatusReasonInvalid, tt.message)
			if s.Details == nil || s.Details.Name != "foos.bad.example.com" || s.Details.Group != "apiextensions.k8s.io" ||
				s.Details.Kind != "CustomResourceDefinition" || len(s.Details.Causes) != len(tt.causes) {
				t.Fatalf("details = %+v, want %d causes", s.Details, len(tt.causes))
			}
			for i, want := range tt.causes {
				got := s.Details.Causes[i]
				if got.Type != want.Type || got.Field != want.Field || want.Message != "" && got.Message != want.Message {
					t.Errorf("cause %d = %+v, want %+v", i, got, want)
				}
			}
			e.Do(t, http.MethodGet, crdsPath+"/foos.bad.example.com", nil).
				WantStatus(t, 404, metav1.StatusReasonNotFound, `customresourcedefinitions.apiextensions.k8s.io "foos.bad.example.com" not found`)
			if keys := e.KeysWith(t, "foos.bad.example.com"); len(keys) > 0 {
				t.Fatalf("refused CRD stored: %v", keys)
			}
		})
	}

	// With maxItems and maxLength the rule is cheap enough.
	e.CreateCRD(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bounds.bad.example.com}
spec:
  group: bad.example.com
  scope: Namespaced
  names: {plural: bounds, singular: bound, kind: Bound}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              foo:
                type: array
                maxItems: 25
                items:
                  type: string
                  maxLength: 10
                x-kubernetes-validations:
                - rule: "self.all(x, x.contains('a string'))"
`)
}

// TestCRDKindConflict: a CRD whose kind another CRD of the group holds is
// created, but its names are not accepted (kube's condition, reason and
// message), it is not established, and it is served under no name; the CRD
// holding the kind keeps serving its objects.
func TestCRDKindConflict(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	crd := func(plural string) string {
		return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.clash.example.com}
spec:
  group: clash.example.com
  scope: Namespaced
  names: {plural: ` + plural + `, singular: ` + strings.TrimSuffix(plural, "s") + `, kind: Widget}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`
	}
	e.CreateCRD(t, crd("widgets"))
	d := e.Dynamic(t)
	widgets := d.Resource(schema.GroupVersionResource{Group: "clash.example.com", Version: "v1", Resource: "widgets"}).Namespace(ns)
	w1, err := widgets.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: clash.example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	r := e.Do(t, http.MethodPost, crdsPath, jsonOf(t, crd("gizmos")))
	if r.Code != http.StatusCreated {
		t.Fatalf("create of the clashing CRD = %d %s, want 201", r.Code, r.Body)
	}
	var gizmos *unstructured.Unstructured
	e2eutil.Eventually(t, 10*time.Second, "the naming controller's verdict", func(c context.Context) (bool, error) {
		gizmos, err = d.Resource(e2eutil.CRDGVR).Get(c, "gizmos.clash.example.com", metav1.GetOptions{})
		return err == nil && e2eutil.HasCondition(gizmos, "NamesAccepted", "False"), err
	})
	conds, _, _ := unstructured.NestedSlice(gizmos.Object, "status", "conditions")
	want := map[string][3]string{
		// kube checks the kind, then the list kind: the last conflict
		// found names the condition.
		"NamesAccepted": {"False", "ListKindConflict", `"WidgetList" is already in use`},
		"Established":   {"False", "NotAccepted", "not all names are accepted"},
	}
	if len(conds) != len(want) {
		t.Fatalf("conditions = %v, want NamesAccepted and Established", conds)
	}
	for _, c := range conds {
		m := c.(map[string]any)
		w, ok := want[m["type"].(string)]
		if !ok || m["status"] != w[0] || m["reason"] != w[1] || m["message"] != w[2] {
			t.Errorf("condition %v, want %v", m, w)
		}
	}
	accepted, _, _ := unstructured.NestedMap(gizmos.Object, "status", "acceptedNames")
	if accepted["plural"] != "gizmos" || accepted["singular"] != "gizmo" || accepted["kind"] != "" || accepted["listKind"] != nil {
		t.Errorf("acceptedNames = %v, want the plural and singular only", accepted)
	}

	// Served under no name: kube's plain 404 under the plural, for reads
	// and writes; discovery lists widgets only.
	gizmoPath := "/apis/clash.example.com/v1/namespaces/" + ns + "/gizmos"
	wantPlainNotFound(t, e.Do(t, http.MethodGet, gizmoPath, nil))
	wantPlainNotFound(t, e.Do(t, http.MethodPost, gizmoPath, []byte(`{"apiVersion":"clash.example.com/v1","kind":"Widget","metadata":{"name":"g"}}`)))
	list, err := discovery.NewDiscoveryClientForConfigOrDie(e.Config).ServerResourcesForGroupVersion("clash.example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, r := range list.APIResources {
		served = append(served, r.Name)
	}
	if !slices.Equal(served, []string{"widgets"}) {
		t.Errorf("clash.example.com/v1 serves %v, want [widgets]", served)
	}
	if keys := e.KeysWith(t, "/clash.example.com/gizmos/"); len(keys) > 0 {
		t.Errorf("objects stored under the refused names: %v", keys)
	}
	got, err := widgets.Get(e2eutil.Ctx(t), "w1", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != w1.GetResourceVersion() {
		t.Fatalf("widget after the clash = %v, %v; want it unchanged", got, err)
	}
}

// TestCRDBadRequests: requests kube refuses for custom resources are refused
// with kube's code, reason and message, and change nothing stored.
func TestCRDBadRequests(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, e2eutil.CronTabCRD)
	e.CreateCRD(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterthings.stable.example.com}
spec:
  group: stable.example.com
  scope: Cluster
  names: {plural: clusterthings, singular: clusterthing, kind: ClusterThing}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	d := e.Dynamic(t)
	crontabs := d.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}).Namespace(ns)
	things := d.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "clusterthings"})
	ct, err := crontabs.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: a}\nspec: {cronSpec: '* * * * *', replicas: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thing, err := things.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: stable.example.com/v1\nkind: ClusterThing\nmetadata: {name: t1}\nspec: {x: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := e.KeysWith(t, "/stable.example.com/")
	ctPath := "/apis/stable.example.com/v1/namespaces/" + ns + "/crontabs"

	t.Run("too large", func(t *testing.T) {
		big := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"big"},"spec":{"cronSpec":"` + strings.Repeat("x", 3*1024*1024) + `"}}`
		e.Do(t, http.MethodPost, ctPath, []byte(big)).
			WantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728")
		e.Do(t, http.MethodPut, ctPath+"/a", []byte(big)).
			WantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728")
	})

	t.Run("strategic merge patch", func(t *testing.T) {
		const message = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
		for _, path := range []string{ctPath + "/a", ctPath + "/a/status", ctPath + "/a/scale"} {
			r := e.Do(t, http.MethodPatch, path, []byte(`{"spec":{"replicas":3}}`), "Content-Type", string(types.StrategicMergePatchType))
			if s := r.WantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType, message); s.Details != nil {
				t.Errorf("%s: details = %+v, want none (kube has none)", path, s.Details)
			}
		}
		_, err := crontabs.Patch(e2eutil.Ctx(t), "a", types.StrategicMergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		e2eutil.WantStatus(t, err, 415, metav1.StatusReasonUnsupportedMediaType, message)
	})

	t.Run("cluster-scoped through a namespaced path", func(t *testing.T) {
		nsPath := "/apis/stable.example.com/v1/namespaces/" + ns + "/clusterthings"
		wantPlainNotFound(t, e.Do(t, http.MethodGet, nsPath+"/t1", nil))
		wantPlainNotFound(t, e.Do(t, http.MethodGet, nsPath, nil))
		wantPlainNotFound(t, e.Do(t, http.MethodPost, nsPath, []byte(`{"apiVersion":"stable.example.com/v1","kind":"ClusterThing","metadata":{"name":"t2"}}`)))
		wantPlainNotFound(t, e.Do(t, http.MethodPut, nsPath+"/t1", []byte(`{"apiVersion":"stable.example.com/v1","kind":"ClusterThing","metadata":{"name":"t1"},"spec":{"x":2}}`)))
		wantPlainNotFound(t, e.Do(t, http.MethodDelete, nsPath+"/t1", nil))
		// A namespaced one through the cluster path: only list and watch.
		wantPlainNotFound(t, e.Do(t, http.MethodGet, "/apis/stable.example.com/v1/crontabs/a", nil))
		wantPlainNotFound(t, e.Do(t, http.MethodDelete, "/apis/stable.example.com/v1/crontabs", nil))
		if r := e.Do(t, http.MethodGet, "/apis/stable.example.com/v1/crontabs", nil); r.Code != 200 {
			t.Fatalf("list of crontabs in all namespaces = %d %s", r.Code, r.Body)
		}
		got, err := things.Get(e2eutil.Ctx(t), "t1", metav1.GetOptions{})
		if err != nil || got.GetResourceVersion() != thing.GetResourceVersion() {
			t.Fatalf("cluster-scoped object = %v, %v; want it unchanged", got, err)
		}
	})

	t.Run("unknown subresource", func(t *testing.T) {
		e.Do(t, http.MethodGet, "/apis/stable.example.com/v1/clusterthings/t1/status", nil).
			WantStatus(t, 404, metav1.StatusReasonNotFound, `clusterthings.stable.example.com "t1" not found`)
		e.Do(t, http.MethodGet, ctPath+"/a/nope", nil).
			WantStatus(t, 404, metav1.StatusReasonNotFound, `crontabs.stable.example.com "a" not found`)
	})

	got, err := crontabs.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != ct.GetResourceVersion() {
		t.Fatalf("crontab after bad requests = %v, %v; want it unchanged", got, err)
	}
	if now := e.KeysWith(t, "/stable.example.com/"); !slices.Equal(now, keys) {
		t.Fatalf("bad requests changed the stored keys:\nbefore %q\nafter  %q", keys, now)
	}

	t.Run("deleted CRD", func(t *testing.T) {
		if err := d.Resource(e2eutil.CRDGVR).Delete(e2eutil.Ctx(t), "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Gone, and no longer served (the server follows its CRDs through
		// an informer, so a moment after).
		e2eutil.Eventually(t, 20*time.Second, "CRD gone and not served", func(c context.Context) (bool, error) {
			_, err := d.Resource(e2eutil.CRDGVR).Get(c, "crontabs.stable.example.com", metav1.GetOptions{})
			return apierrors.IsNotFound(err) && e.Do(t, http.MethodGet, ctPath+"/a", nil).Header.Get("Content-Type") == "text/plain; charset=utf-8", nil
		})
		wantPlainNotFound(t, e.Do(t, http.MethodGet, ctPath+"/a", nil))
		wantPlainNotFound(t, e.Do(t, http.MethodGet, ctPath, nil))
		wantPlainNotFound(t, e.Do(t, http.MethodPost, ctPath, []byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"b"}}`)))
		// client-go reads kube's plain 404 as NotFound.
		if _, err := crontabs.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after the CRD was deleted: %v, want NotFound", err)
		}
		if keys := e.KeysWith(t, "/stable.example.com/crontabs/"); len(keys) > 0 {
			t.Fatalf("custom resources of the deleted CRD left in etcd: %v", keys)
		}
		// The group's other CRD serves on.
		if _, err := things.Get(e2eutil.Ctx(t), "t1", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		// Once no CRD has the group, its paths are a 404 too (kube's plain
		// one; capstan's last delegate answers a NotFound Status).
		if err := d.Resource(e2eutil.CRDGVR).Delete(e2eutil.Ctx(t), "clusterthings.stable.example.com", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 20*time.Second, "the group's last CRD gone", func(c context.Context) (bool, error) {
			_, err := things.Get(c, "t1", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if r := e.Do(t, http.MethodGet, "/apis/stable.example.com/v1/clusterthings/t1", nil); r.Code != http.StatusNotFound {
			t.Fatalf("get of a custom resource of a group no CRD has = %d %s, want 404", r.Code, r.Body)
		}
	})
}
