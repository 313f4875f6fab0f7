package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// ratchetCRD starts without rules; TestCRDValidationRatcheting tightens it
// with ratchetRules once an object exists that breaks them.
const ratchetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratchets.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: ratchets, singular: ratchet, kind: Ratchet}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              name: {type: string}
              counter: {type: integer}
              note: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
              ready: {type: integer}
`

// ratchetRules are the schema of ratchetCRD with a bound, a rule on
// self and a transition rule on spec, and a rule on status.
const ratchetRules = `{
  "type": "object",
  "properties": {
    "spec": {"type": "object", "properties": {
      "size": {"type": "integer", "maximum": 10},
      "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('ok')", "message": "name must start with ok"}]},
      "counter": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "counter may only grow"}]},
      "note": {"type": "string"}}},
    "status": {"type": "object", "properties": {
      "phase": {"type": "string", "x-kubernetes-validations": [{"rule": "!self.startsWith('Bad')", "message": "phase must not be Bad"}]},
      "ready": {"type": "integer", "minimum": 0}}}}}`

// TestCRDValidationRatcheting: after a CRD's schema tightens, updates of
// objects that broke the new rules before succeed as long as the broken
// values stay as they were (CRDValidationRatcheting, GA in kube). As in
// kube v1.37.2, a ratcheted CEL rule failure comes back as a Warning
// header, a ratcheted schema error silently; transition rules and changed
// values are refused.
func TestCRDValidationRatcheting(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	crd := e.CreateCRD(t, ratchetCRD)
	got := &e2eutil.Warnings{}
	cfg := *e.Config
	cfg.WarningHandler = got
	d, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: "ratchets"}
	objs := d.Resource(gvr).Namespace(ns)

	old := e2eutil.FromYAML(t, `
apiVersion: cel.example.com/v1
kind: Ratchet
metadata: {name: old}
spec: {size: 20, name: bad, counter: 5, note: a}
`)
	old, err = objs.Create(e2eutil.Ctx(t), old, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Object["status"] = map[string]any{"phase": "Bad", "ready": int64(-1)}
	if old, err = objs.UpdateStatus(e2eutil.Ctx(t), old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Tighten the schema and wait until the server validates with it.
	crds := e.Dynamic(t).Resource(e2eutil.CRDGVR)
	crd, err = crds.Get(e2eutil.Ctx(t), crd.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var rules map[string]any
	if err := json.Unmarshal([]byte(ratchetRules), &rules); err != nil {
		t.Fatal(err)
	}
	versions[0].(map[string]any)["schema"] = map[string]any{"openAPIV3Schema": rules}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Update(e2eutil.Ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := e2eutil.FromYAML(t, `
apiVersion: cel.example.com/v1
kind: Ratchet
metadata: {name: probe}
spec: {size: 20}
`)
	e2eutil.Eventually(t, 10*time.Second, "the new schema served", func(c context.Context) (bool, error) {
		_, err := objs.Create(c, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err), nil
	})

	update := func(t *testing.T, change func(u *unstructured.Unstructured), status bool) error {
		t.Helper()
		u := old.DeepCopy()
		change(u)
		got.Reset()
		var err error
		if status {
			_, err = objs.UpdateStatus(e2eutil.Ctx(t), u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		} else {
			_, err = objs.Update(e2eutil.Ctx(t), u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		}
		return err
	}
	set := func(value any, path ...string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
				t.Fatal(err)
			}
		}
	}
	const (
		nameWarning  = `spec.name: Invalid value: "bad": name must start with ok`
		phaseWarning = `status.phase: Invalid value: "Bad": phase must not be Bad`
	)
	for _, tt := range []struct {
		name     string
		change   func(u *unstructured.Unstructured)
		status   bool
		want     string   // the Status message; "" for accepted
		warnings []string // in any order: kube's follows Go's map iteration
	}{
		// The main resource keeps the old status: its rules ratchet too.
		{name: "other field changed", change: set("b", "spec", "note"),
			warnings: []string{nameWarning, phaseWarning}},
		{name: "labels changed", change: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) },
			warnings: []string{nameWarning, phaseWarning}},
		{name: "broken rule's value changed", change: set("worse", "spec", "name"),
			want:     `Ratchet.cel.example.com "old" is invalid: spec.name: Invalid value: "worse": name must start with ok`,
			warnings: []string{phaseWarning}},
		{name: "broken bound's value changed", change: set(int64(30), "spec", "size"),
			want:     `Ratchet.cel.example.com "old" is invalid: spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10`,
			warnings: []string{nameWarning, phaseWarning}},
		{name: "broken values fixed", change: func(u *unstructured.Unstructured) {
			set("ok", "spec", "name")(u)
			set(int64(10), "spec", "size")(u)
		}, warnings: []string{phaseWarning}},
		{name: "transition rule", change: set(int64(4), "spec", "counter"),
			want:     `Ratchet.cel.example.com "old" is invalid: spec.counter: Invalid value: 4: counter may only grow`,
			warnings: []string{nameWarning, phaseWarning}},

		// A status update runs the rules of the whole object.
		{name: "status: other field changed", status: true, change: set(int64(3), "status", "ready"),
			warnings: []string{nameWarning, phaseWarning}},
		{name: "status: broken rule's value changed", status: true, change: set("Bad!", "status", "phase"),
			want:     `Ratchet.cel.example.com "old" is invalid: status.phase: Invalid value: "Bad!": phase must not be Bad`,
			warnings: []string{nameWarning}},
		{name: "status: broken bound's value changed", status: true, change: set(int64(-2), "status", "ready"),
			want:     `Ratchet.cel.example.com "old" is invalid: status.ready: Invalid value: -2: ready in body should be greater than or equal to 0`,
			warnings: []string{nameWarning, phaseWarning}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := update(t, tt.change, tt.status)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "":
				e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, tt.want)
			}
			gotWarnings := strings.Split(got.Joined(), "\n")
			if got.Joined() == "" {
				gotWarnings = nil
			}
			sort.Strings(gotWarnings)
			sort.Strings(tt.warnings)
			if !slices.Equal(gotWarnings, tt.warnings) {
				t.Errorf("warnings = %q\n want %q", gotWarnings, tt.warnings)
			}
		})
	}
}
