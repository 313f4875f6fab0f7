package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ruleCRD holds, each on a property of spec of its own, the validation
// rules of kube's CRD documentation (Validation rules): the introduction's
// replicas rules with messages, the table of examples (the envars example,
// which kube v1.37 refuses as too expensive even with bounds, left out;
// the map example written self.map1[...], as it compiles), transition rules
// (self == oldSelf with "Value is immutable", a monotonic counter),
// messageExpression (concatenating a bounded string: kube refuses the
// documentation's string(self.maxLimit) as too expensive, see
// TestCRDValidationRulesThatDoNotCompile), reason with fieldPath, and
// optionalOldSelf's ratcheting examples.
const ruleCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rules.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: rules, singular: rule, kind: Rule}
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
              scale:
                type: object
                required: [minReplicas, replicas, maxReplicas]
                x-kubernetes-validations:
                - rule: "self.minReplicas <= self.replicas"
                  message: "replicas should be greater than or equal to minReplicas."
                - rule: "self.replicas <= self.maxReplicas"
                  message: "replicas should be smaller than or equal to maxReplicas."
                properties:
                  minReplicas: {type: integer}
                  replicas: {type: integer}
                  maxReplicas: {type: integer}
              ordered:
                type: object
                x-kubernetes-validations:
                - rule: "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"
                properties:
                  minReplicas: {type: integer}
                  replicas: {type: integer}
                  maxReplicas: {type: integer}
              states:
                type: object
                x-kubernetes-validations:
                - rule: "'Available' in self.stateCounts"
                properties:
                  stateCounts:
                    type: object
                    additionalProperties: {type: integer}
              lists:
                type: object
                x-kubernetes-validations:
                - rule: "(size(self.list1) == 0) != (size(self.list2) == 0)"
                properties:
                  list1: {type: array, items: {type: string}}
                  list2: {type: array, items: {type: string}}
              maps:
                type: object
                x-kubernetes-validations:
                - rule: "!('MY_KEY' in self.map1) || self.map1['MY_KEY'].matches('^[a-zA-Z]*$')"
                properties:
                  map1:
                    type: object
                    maxProperties: 10
                    additionalProperties: {type: string, maxLength: 64}
              times:
                type: object
                x-kubernetes-validations:
                - rule: "has(self.expired) && self.created + self.ttl < self.expired"
                properties:
                  created: {type: string, format: date-time}
                  ttl: {type: string, format: duration}
                  expired: {type: string, format: date-time}
              probe:
                type: object
                x-kubernetes-validations:
                - rule: "self.health.startsWith('ok')"
                properties:
                  health: {type: string}
              gadgets:
                type: object
                x-kubernetes-validations:
                - rule: "self.widgets.exists(w, w.key == 'x' && w.foo < 10)"
                properties:
                  widgets:
                    type: array
                    maxItems: 10
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [key]
                    items:
                      type: object
                      required: [key]
                      properties:
                        key: {type: string, maxLength: 64}
                        foo: {type: integer}
              rollout:
                x-kubernetes-int-or-string: true
                x-kubernetes-validations:
                - rule: "type(self) == string ? self == '100%' : self == 1000"
              sets:
                type: object
                x-kubernetes-validations:
                - rule: "self.set1.all(e, !(e in self.set2))"
                properties:
                  set1: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 64}}
                  set2: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 64}}
              keyed:
                type: object
                x-kubernetes-validations:
                - rule: "size(self.names) == size(self.details) && self.names.all(n, n in self.details)"
                properties:
                  names: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 64}}
                  details:
                    type: object
                    maxProperties: 10
                    additionalProperties: {type: string, maxLength: 64}
              immutable:
                type: string
                x-kubernetes-validations:
                - rule: "self == oldSelf"
                  message: "Value is immutable"
              counter:
                type: integer
                x-kubernetes-validations:
                - rule: "self >= oldSelf"
                  message: "counter may only grow"
              limit:
                type: object
                x-kubernetes-validations:
                - rule: "self.x <= self.maxLimit"
                  messageExpression: "'x exceeded the limit of ' + self.name"
                properties:
                  x: {type: integer}
                  maxLimit: {type: integer}
                  name: {type: string, maxLength: 32}
              guarded:
                type: object
                x-kubernetes-validations:
                - rule: "self.foo.test.x <= self.maxLimit"
                  reason: FieldValueForbidden
                  fieldPath: ".foo.test.x"
                properties:
                  maxLimit: {type: integer}
                  foo:
                    type: object
                    properties:
                      test:
                        type: object
                        properties:
                          x: {type: integer}
              required:
                type: object
                x-kubernetes-validations:
                - rule: "has(self.name)"
                  reason: FieldValueRequired
                  fieldPath: ".name"
                  message: "name must be set"
                properties:
                  name: {type: string}
              ratchet:
                type: object
                x-kubernetes-validations:
                - rule: 'self.foo == "foo" || (oldSelf.hasValue() && oldSelf.value().foo != "foo")'
                  optionalOldSelf: true
                properties:
                  foo: {type: string}
              grow:
                type: object
                maxProperties: 10
                additionalProperties: {type: string, maxLength: 64}
                x-kubernetes-validations:
                - rule: "oldSelf.optMap(o, o.size()).orValue(0) < 4 || self.size() >= 4"
                  optionalOldSelf: true
`

// TestCRDValidationRules: the rules of kube's documentation accept and
// refuse what it says they do, end to end, with kube's messages and causes
// (recorded from kube-apiserver v1.37.2).
func TestCRDValidationRules(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, ruleCRD)
	rules := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: "rules"}).Namespace(ns)
	invalid := metav1.CauseTypeFieldValueInvalid
	forbidden := metav1.CauseType(field.ErrorTypeForbidden)
	required := metav1.CauseTypeFieldValueRequired
	for _, tt := range []struct {
		name  string
		old   string // JSON spec to create first, then update to spec
		spec  string // JSON
		want  string // the Status message after the object's name; "" for accepted
		cause metav1.CauseType
		field string
	}{
		{name: "replicas ordered", spec: `{"scale":{"minReplicas":0,"replicas":5,"maxReplicas":10}}`},
		// The documentation's request and answer.
		{name: "replicas above max", spec: `{"scale":{"minReplicas":0,"replicas":20,"maxReplicas":10}}`,
			want: "spec.scale: Invalid value: replicas should be smaller than or equal to maxReplicas.", cause: invalid, field: "spec.scale"},
		{name: "replicas out of both bounds", spec: `{"scale":{"minReplicas":30,"replicas":20,"maxReplicas":10}}`,
			want: "[spec.scale: Invalid value: replicas should be greater than or equal to minReplicas., spec.scale: Invalid value: replicas should be smaller than or equal to maxReplicas.]", cause: invalid, field: "spec.scale"},
		{name: "no message", spec: `{"ordered":{"minReplicas":0,"replicas":20,"maxReplicas":10}}`,
			want: "spec.ordered: Invalid value: failed rule: self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas", cause: invalid, field: "spec.ordered"},
		{name: "ordered", spec: `{"ordered":{"minReplicas":1,"replicas":2,"maxReplicas":3}}`},
		{name: "map has key", spec: `{"states":{"stateCounts":{"Available":1}}}`},
		{name: "map lacks key", spec: `{"states":{"stateCounts":{"Pending":1}}}`,
			want: "spec.states: Invalid value: failed rule: 'Available' in self.stateCounts", cause: invalid, field: "spec.states"},
		{name: "one list non-empty", spec: `{"lists":{"list1":["a"],"list2":[]}}`},
		{name: "both lists non-empty", spec: `{"lists":{"list1":["a"],"list2":["b"]}}`,
			want: "spec.lists: Invalid value: failed rule: (size(self.list1) == 0) != (size(self.list2) == 0)", cause: invalid, field: "spec.lists"},
		{name: "map value matches", spec: `{"maps":{"map1":{"MY_KEY":"abc","OTHER":"1"}}}`},
		{name: "map value does not match", spec: `{"maps":{"map1":{"MY_KEY":"abc1"}}}`,
			want: "spec.maps: Invalid value: failed rule: !('MY_KEY' in self.map1) || self.map1['MY_KEY'].matches('^[a-zA-Z]*$')", cause: invalid, field: "spec.maps"},
		{name: "expires after ttl", spec: `{"times":{"created":"2024-01-01T00:00:00Z","ttl":"1h","expired":"2024-01-01T02:00:00Z"}}`},
		{name: "expires before ttl", spec: `{"times":{"created":"2024-01-01T00:00:00Z","ttl":"3h","expired":"2024-01-01T02:00:00Z"}}`,
			want: "spec.times: Invalid value: failed rule: has(self.expired) && self.created + self.ttl < self.expired", cause: invalid, field: "spec.times"},
		{name: "never expires", spec: `{"times":{"created":"2024-01-01T00:00:00Z","ttl":"3h"}}`,
			want: "spec.times: Invalid value: failed rule: has(self.expired) && self.created + self.ttl < self.expired", cause: invalid, field: "spec.times"},
		{name: "health ok", spec: `{"probe":{"health":"ok: fine"}}`},
		{name: "health not ok", spec: `{"probe":{"health":"degraded"}}`,
			want: "spec.probe: Invalid value: failed rule: self.health.startsWith('ok')", cause: invalid, field: "spec.probe"},
		{name: "list map item", spec: `{"gadgets":{"widgets":[{"key":"x","foo":5},{"key":"y","foo":50}]}}`},
		{name: "list map item too big", spec: `{"gadgets":{"widgets":[{"key":"x","foo":50}]}}`,
			want: "spec.gadgets: Invalid value: failed rule: self.widgets.exists(w, w.key == 'x' && w.foo < 10)", cause: invalid, field: "spec.gadgets"},
		{name: "int-or-string string", spec: `{"rollout":"100%"}`},
		{name: "int-or-string int", spec: `{"rollout":1000}`},
		{name: "int-or-string wrong string", spec: `{"rollout":"50%"}`,
			want: `spec.rollout: Invalid value: "50%": failed rule: type(self) == string ? self == '100%' : self == 1000`, cause: invalid, field: "spec.rollout"},
		{name: "int-or-string wrong int", spec: `{"rollout":5}`,
			want: "spec.rollout: Invalid value: 5: failed rule: type(self) == string ? self == '100%' : self == 1000", cause: invalid, field: "spec.rollout"},
		{name: "disjoint sets", spec: `{"sets":{"set1":["a","b"],"set2":["c"]}}`},
		{name: "overlapping sets", spec: `{"sets":{"set1":["a","b"],"set2":["b"]}}`,
			want: "spec.sets: Invalid value: failed rule: self.set1.all(e, !(e in self.set2))", cause: invalid, field: "spec.sets"},
		{name: "map keyed by set", spec: `{"keyed":{"names":["a","b"],"details":{"a":"1","b":"2"}}}`},
		{name: "map not keyed by set", spec: `{"keyed":{"names":["a","b"],"details":{"a":"1","c":"2"}}}`,
			want: "spec.keyed: Invalid value: failed rule: size(self.names) == size(self.details) && self.names.all(n, n in self.details)", cause: invalid, field: "spec.keyed"},

		// Transition rules run on updates with an old value only.
		{name: "immutable on create", spec: `{"immutable":"a"}`},
		{name: "immutable kept", old: `{"immutable":"a"}`, spec: `{"immutable":"a","probe":{"health":"ok"}}`},
		{name: "immutable changed", old: `{"immutable":"a"}`, spec: `{"immutable":"b"}`,
			want: `spec.immutable: Invalid value: "b": Value is immutable`, cause: invalid, field: "spec.immutable"},
		{name: "immutable added", old: `{}`, spec: `{"immutable":"b"}`},
		{name: "counter grows", old: `{"counter":1}`, spec: `{"counter":2}`},
		{name: "counter shrinks", old: `{"counter":2}`, spec: `{"counter":1}`,
			want: "spec.counter: Invalid value: 1: counter may only grow", cause: invalid, field: "spec.counter"},

		// messageExpression, reason and fieldPath.
		{name: "under the limit", spec: `{"limit":{"x":1,"maxLimit":2,"name":"small"}}`},
		{name: "message expression", spec: `{"limit":{"x":3,"maxLimit":2,"name":"small"}}`,
			want: "spec.limit: Invalid value: x exceeded the limit of small", cause: invalid, field: "spec.limit"},
		{name: "guarded", spec: `{"guarded":{"maxLimit":5,"foo":{"test":{"x":1}}}}`},
		{name: "reason and field path", spec: `{"guarded":{"maxLimit":5,"foo":{"test":{"x":10}}}}`,
			want: "spec.guarded.foo.test.x: Forbidden: failed rule: self.foo.test.x <= self.maxLimit", cause: forbidden, field: "spec.guarded.foo.test.x"},
		{name: "reason required", spec: `{"required":{}}`,
			want: "spec.required.name: Required value: name must be set", cause: required, field: "spec.required.name"},

		// optionalOldSelf: rules that also run on create, and ratchet.
		{name: "ratchet created right", spec: `{"ratchet":{"foo":"foo"}}`},
		{name: "ratchet created wrong", spec: `{"ratchet":{"foo":"bar"}}`,
			want: `spec.ratchet: Invalid value: failed rule: self.foo == "foo" || (oldSelf.hasValue() && oldSelf.value().foo != "foo")`, cause: invalid, field: "spec.ratchet"},
		{name: "ratchet leaves foo", old: `{"ratchet":{"foo":"foo"}}`, spec: `{"ratchet":{"foo":"bar"}}`,
			want: `spec.ratchet: Invalid value: failed rule: self.foo == "foo" || (oldSelf.hasValue() && oldSelf.value().foo != "foo")`, cause: invalid, field: "spec.ratchet"},
		{name: "ratchet added wrong", old: `{}`, spec: `{"ratchet":{"foo":"bar"}}`,
			want: `spec.ratchet: Invalid value: failed rule: self.foo == "foo" || (oldSelf.hasValue() && oldSelf.value().foo != "foo")`, cause: invalid, field: "spec.ratchet"},
		{name: "small map created", spec: `{"grow":{"a":"1"}}`},
		{name: "small map grows", old: `{"grow":{"a":"1"}}`, spec: `{"grow":{"a":"1","b":"2"}}`},
		{name: "big map shrinks below the new minimum", old: `{"grow":{"a":"1","b":"2","c":"3","d":"4"}}`, spec: `{"grow":{"a":"1"}}`,
			want: "spec.grow: Invalid value: failed rule: oldSelf.optMap(o, o.size()).orValue(0) < 4 || self.size() >= 4", cause: invalid, field: "spec.grow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.ReplaceAll(tt.name, " ", "-")
			object := func(spec, rv string) *unstructured.Unstructured {
				var s map[string]any
				if err := json.Unmarshal([]byte(spec), &s); err != nil {
					t.Fatal(err)
				}
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cel.example.com/v1", "kind": "Rule", "spec": s}}
				u.SetName(name)
				u.SetResourceVersion(rv)
				return u
			}
			var err error
			var before *unstructured.Unstructured
			if tt.old != "" {
				if before, err = rules.Create(e2eutil.Ctx(t), object(tt.old, ""), metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating the old object: %v", err)
				}
				_, err = rules.Update(e2eutil.Ctx(t), object(tt.spec, before.GetResourceVersion()), metav1.UpdateOptions{})
			} else {
				_, err = rules.Create(e2eutil.Ctx(t), object(tt.spec, ""), metav1.CreateOptions{})
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Rule.cel.example.com "`+name+`" is invalid: `+tt.want)
			e2eutil.WantCause(t, s, tt.cause, tt.field)
			// Nothing refused was stored.
			got, err := rules.Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
			switch {
			case before == nil && err == nil:
				t.Fatalf("refused object stored: %v", got.Object)
			case before != nil && (err != nil || got.GetResourceVersion() != before.GetResourceVersion()):
				t.Fatalf("refused update changed the object: %v, %v", got, err)
			}
		})
	}

	// Failures in several properties are all reported (in an order kube
	// does not fix: it follows Go's map iteration).
	r := e.Do(t, http.MethodPost, "/apis/cel.example.com/v1/namespaces/"+ns+"/rules",
		[]byte(`{"apiVersion":"cel.example.com/v1","kind":"Rule","metadata":{"name":"many"},"spec":{"required":{},"guarded":{"maxLimit":5,"foo":{"test":{"x":10}}},"probe":{"health":"bad"}}}`))
	s := r.WantStatus(t, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, &s, required, "spec.required.name")
	e2eutil.WantCause(t, &s, forbidden, "spec.guarded.foo.test.x")
	e2eutil.WantCause(t, &s, invalid, "spec.probe")
	if len(s.Details.Causes) != 3 {
		t.Fatalf("causes = %+v, want 3", s.Details.Causes)
	}
}

// TestCRDValidationRulesAtTheRoot: a rule at the root of the schema sees
// metadata.name (the documentation's prefix example); it is not run while
// the schema refuses the object, as kube says.
func TestCRDValidationRulesAtTheRoot(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: prefixeds.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: prefixeds, singular: prefixed, kind: Prefixed}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [prefix]
        x-kubernetes-validations:
        - rule: self.metadata.name.startsWith(self.prefix)
        properties:
          prefix: {type: string, maxLength: 16}
`)
	path := "/apis/cel.example.com/v1/namespaces/" + ns + "/prefixeds"
	body := func(name, prefix string) []byte {
		b := `{"apiVersion":"cel.example.com/v1","kind":"Prefixed","metadata":{"name":"` + name + `"}`
		if prefix != "" {
			b += `,"prefix":"` + prefix + `"`
		}
		return []byte(b + "}")
	}
	if r := e.Do(t, http.MethodPost, path, body("web-1", "web-")); r.Code != http.StatusCreated {
		t.Fatalf("web-1 = %d %s", r.Code, r.Body)
	}
	s := e.Do(t, http.MethodPost, path, body("db-1", "web-")).WantStatus(t, 422, metav1.StatusReasonInvalid,
		`Prefixed.cel.example.com "db-1" is invalid: <nil>: Invalid value: failed rule: self.metadata.name.startsWith(self.prefix)`)
	e2eutil.WantCause(t, &s, metav1.CauseTypeFieldValueInvalid, "<nil>")
	s = e.Do(t, http.MethodPost, path, body("db-2", "")).WantStatus(t, 422, metav1.StatusReasonInvalid,
		`Prefixed.cel.example.com "db-2" is invalid: [prefix: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
	e2eutil.WantCause(t, &s, metav1.CauseTypeFieldValueRequired, "prefix")
}

// TestCRDValidationRulesThatDoNotCompile: the compilation failures kube's
// documentation shows, and its messageExpression example, which kube
// v1.37.2 refuses as too expensive (string() of an integer has no bounded
// size), refuse the CRD with kube's messages.
func TestCRDValidationRulesThatDoNotCompile(t *testing.T) {
	e := e2eutil.Start(t)
	const prefix = `CustomResourceDefinition.apiextensions.k8s.io "bads.cel.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[field].x-kubernetes-validations[0].`
	for _, tt := range []struct {
		name, field, message string
	}{
		{"no matching overload", `{type: integer, x-kubernetes-validations: [{rule: "self == true"}]}`,
			prefix + `rule: Invalid value: {"Rule":"self == true","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'` +
				"\n | self == true\n | .....^"},
		{"no such field", `{type: object, properties: {foo: {type: integer}}, x-kubernetes-validations: [{rule: "self.nonExistingField > 0"}]}`,
			prefix + `rule: Invalid value: {"Rule":"self.nonExistingField \u003e 0","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'` +
				"\n | self.nonExistingField > 0\n | ....^"},
		{"invalid argument", `{type: object, properties: {foo: {type: integer}}, x-kubernetes-validations: [{rule: "has(self)"}]}`,
			prefix + `rule: Invalid value: {"Rule":"has(self)","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: invalid argument to has() macro` +
				"\n | has(self)\n | ....^"},
		{"documented messageExpression", `{type: object, properties: {x: {type: integer}, maxLimit: {type: integer}}, x-kubernetes-validations: [{rule: "self.x <= self.maxLimit", messageExpression: '"x exceeded max limit of " + string(self.maxLimit)'}]}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bads.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: bads, singular: bad, kind: Bad}
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
              field: ` + tt.field + "\n"
			s := e.Do(t, http.MethodPost, crdsPath, jsonOf(t, crd)).WantStatus(t, 422, metav1.StatusReasonInvalid, tt.message)
			if tt.message == "" {
				want := metav1.StatusCause{Type: metav1.CauseType(field.ErrorTypeForbidden),
					Field:   "spec.validation.openAPIV3Schema.properties[spec].properties[field].x-kubernetes-validations[0].messageExpression",
					Message: "Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"}
				if len(s.Details.Causes) == 0 || s.Details.Causes[0] != want {
					t.Fatalf("causes = %+v, want first %+v", s.Details.Causes, want)
				}
			}
			if keys := e.KeysWith(t, "bads.cel.example.com"); len(keys) > 0 {
				t.Fatalf("refused CRD stored: %v", keys)
			}
		})
	}
}
