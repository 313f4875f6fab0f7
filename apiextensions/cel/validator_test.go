package cel

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestValidate(t *testing.T) {
	replicas := root(rules(object(map[string]S{
		"minReplicas": intg(),
		"replicas":    intg(),
	}), rule("self.minReplicas <= self.replicas")))

	immutable := root(object(map[string]S{
		"name": rules(str(), ruleMsg("self == oldSelf", "Value is immutable")),
	}))

	limits := func(r apiextv1.ValidationRule) *S {
		return root(rules(object(map[string]S{
			"x":        intg(),
			"maxLimit": intg(),
			"foo": object(map[string]S{
				"test": object(map[string]S{"x": intg()}),
			}),
			"labels": mapOf(str()),
		}), r))
	}
	forbidden := apiextv1.FieldValueForbidden
	required := apiextv1.FieldValueRequired
	duplicate := apiextv1.FieldValueDuplicate

	field1 := func(s S) *S { return root(object(map[string]S{"f": s})) }

	ports := root(object(map[string]S{
		"ports": mapList(rules(object(map[string]S{
			"name": str(),
			"port": intg(),
		}), ruleMsg("self.port == oldSelf.port", "port is immutable")), "name"),
		"atomic": list(rules(object(map[string]S{
			"port": intg(),
		}), ruleMsg("self.port == oldSelf.port", "port is immutable"))),
		"byName": mapOf(rules(intg(), ruleMsg("self == oldSelf", "immutable"))),
	}))

	withRoot := &S{Type: "object", Properties: map[string]S{
		"apiVersion": str(),
		"kind":       str(),
		"metadata":   {Type: "object"},
		"spec":       object(map[string]S{"prefix": str()}),
	}, XValidations: apiextv1.ValidationRules{
		ruleMsg("self.metadata.name.startsWith(self.spec.prefix)", "name must start with spec.prefix"),
		ruleMsg("self.kind == 'Widget' && self.apiVersion == 'example.com/v1'", "wrong type"),
	}}

	embedded := root(object(map[string]S{
		"template": rules(S{Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: true},
			ruleMsg("self.kind == 'Pod' && self.metadata.name != ''", "must be a named Pod")),
	}))

	allOf := S{Type: "object", Properties: map[string]S{"a": intg()},
		XValidations: apiextv1.ValidationRules{rule("self.a >= 0")},
		ValueValidation: &schema.ValueValidation{AllOf: []schema.NestedValueValidation{{
			XValidations: apiextv1.ValidationRules{ruleMsg("self.a < 10", "a below 10")},
		}}},
	}

	tests := []struct {
		name   string
		schema *S
		obj    string
		old    string
		want   []string
	}{
		{name: "minReplicas <= replicas", schema: replicas,
			obj: `{"spec":{"minReplicas":1,"replicas":3}}`},
		{name: "minReplicas > replicas", schema: replicas,
			obj:  `{"spec":{"minReplicas":5,"replicas":3}}`,
			want: []string{"spec: Invalid value: failed rule: self.minReplicas <= self.replicas"}},
		{name: "rules skip absent values", schema: replicas, obj: `{"metadata":{"name":"x"}}`},

		{name: "immutable: create runs no transition rule", schema: immutable,
			obj: `{"spec":{"name":"a"}}`},
		{name: "immutable: unchanged", schema: immutable,
			obj: `{"spec":{"name":"a"}}`, old: `{"spec":{"name":"a"}}`},
		{name: "immutable: changed", schema: immutable,
			obj: `{"spec":{"name":"b"}}`, old: `{"spec":{"name":"a"}}`,
			want: []string{`spec.name: Invalid value: "b": Value is immutable`}},
		{name: "immutable: added on update", schema: immutable,
			obj: `{"spec":{"name":"b"}}`, old: `{"spec":{}}`},

		{name: "messageExpression: ok", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", MessageExpression: `"x exceeded max limit of " + string(self.maxLimit)`}),
			obj: `{"spec":{"x":1,"maxLimit":100}}`},
		{name: "messageExpression", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", MessageExpression: `"x exceeded max limit of " + string(self.maxLimit)`}),
			obj:  `{"spec":{"x":101,"maxLimit":100}}`,
			want: []string{"spec: Invalid value: x exceeded max limit of 100"}},
		{name: "messageExpression empty falls back to message", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", Message: "x too large", MessageExpression: `" "`}),
			obj:  `{"spec":{"x":101,"maxLimit":100}}`,
			want: []string{"spec: Invalid value: x too large"}},
		{name: "messageExpression error falls back to the default message", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", MessageExpression: `string(self.x / 0)`}),
			obj:  `{"spec":{"x":101,"maxLimit":100}}`,
			want: []string{"spec: Invalid value: failed rule: self.x <= self.maxLimit"}},

		{name: "reason FieldValueForbidden: ok", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", Reason: &forbidden, Message: "x must not exceed maxLimit"}),
			obj: `{"spec":{"x":100,"maxLimit":100}}`},
		{name: "reason FieldValueForbidden", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x <= self.maxLimit", Reason: &forbidden, Message: "x must not exceed maxLimit"}),
			obj:  `{"spec":{"x":101,"maxLimit":100}}`,
			want: []string{"spec: Forbidden: x must not exceed maxLimit"}},
		{name: "reason FieldValueRequired", schema: limits(apiextv1.ValidationRule{
			Rule: "has(self.x)", Reason: &required, Message: "x is required", FieldPath: ".x"}),
			obj:  `{"spec":{"maxLimit":100}}`,
			want: []string{"spec.x: Required value: x is required"}},
		{name: "reason FieldValueDuplicate", schema: limits(apiextv1.ValidationRule{
			Rule: "self.x != self.maxLimit", Reason: &duplicate}),
			obj:  `{"spec":{"x":100,"maxLimit":100}}`,
			want: []string{"spec: Duplicate value"}},

		{name: "fieldPath: ok", schema: limits(apiextv1.ValidationRule{
			Rule: "self.foo.test.x <= self.maxLimit", FieldPath: ".foo.test.x"}),
			obj: `{"spec":{"foo":{"test":{"x":1}},"maxLimit":100}}`},
		{name: "fieldPath", schema: limits(apiextv1.ValidationRule{
			Rule: "self.foo.test.x <= self.maxLimit", FieldPath: ".foo.test.x"}),
			obj:  `{"spec":{"foo":{"test":{"x":101}},"maxLimit":100}}`,
			want: []string{"spec.foo.test.x: Invalid value: failed rule: self.foo.test.x <= self.maxLimit"}},
		{name: "fieldPath with map key", schema: limits(apiextv1.ValidationRule{
			Rule: "self.labels['a.b'] == 'x'", FieldPath: ".labels['a.b']"}),
			obj:  `{"spec":{"labels":{"a.b":"y"}}}`,
			want: []string{"spec.labels[a.b]: Invalid value: failed rule: self.labels['a.b'] == 'x'"}},

		{name: "has: both", schema: limits(ruleMsg("has(self.x) == has(self.maxLimit)", "x and maxLimit go together")),
			obj: `{"spec":{"x":1,"maxLimit":2}}`},
		{name: "has: one", schema: limits(ruleMsg("has(self.x) == has(self.maxLimit)", "x and maxLimit go together")),
			obj:  `{"spec":{"x":1}}`,
			want: []string{"spec: Invalid value: x and maxLimit go together"}},

		{name: "isSorted: sorted", schema: field1(rules(listMax(strMax(64), 10), rule("self.isSorted()"))),
			obj: `{"spec":{"f":["a","b","c"]}}`},
		{name: "isSorted: unsorted", schema: field1(rules(listMax(strMax(64), 10), rule("self.isSorted()"))),
			obj:  `{"spec":{"f":["b","a"]}}`,
			want: []string{"spec.f: Invalid value: failed rule: self.isSorted()"}},

		{name: "quantity: ok", schema: field1(rules(str(), rule("isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0"))),
			obj: `{"spec":{"f":"512Mi"}}`},
		{name: "quantity: too large", schema: field1(rules(str(), rule("isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0"))),
			obj:  `{"spec":{"f":"2Gi"}}`,
			want: []string{`spec.f: Invalid value: "2Gi": failed rule: isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) <= 0`}},

		{name: "url: https", schema: field1(rules(str(), ruleMsg("isURL(self) && url(self).getScheme() == 'https'", "must be an https URL"))),
			obj: `{"spec":{"f":"https://example.com/path"}}`},
		{name: "url: http", schema: field1(rules(str(), ruleMsg("isURL(self) && url(self).getScheme() == 'https'", "must be an https URL"))),
			obj:  `{"spec":{"f":"http://example.com/path"}}`,
			want: []string{`spec.f: Invalid value: "http://example.com/path": must be an https URL`}},

		{name: "regex: match", schema: field1(rules(str(), rule("self.matches('^[a-z0-9-]+$') && self.find('[0-9]+') == '42'"))),
			obj: `{"spec":{"f":"abc-42"}}`},
		{name: "regex: no match", schema: field1(rules(str(), rule("self.matches('^[a-z0-9-]+$') && self.find('[0-9]+') == '42'"))),
			obj:  `{"spec":{"f":"ABC"}}`,
			want: []string{`spec.f: Invalid value: "ABC": failed rule: self.matches('^[a-z0-9-]+$') && self.find('[0-9]+') == '42'`}},

		{name: "ip/cidr: in range", schema: field1(rules(str(), ruleMsg("isIP(self) && ip(self).family() == 4 && cidr('10.0.0.0/8').containsIP(ip(self))", "must be an IPv4 address in 10.0.0.0/8"))),
			obj: `{"spec":{"f":"10.1.2.3"}}`},
		{name: "ip/cidr: out of range", schema: field1(rules(str(), ruleMsg("isIP(self) && ip(self).family() == 4 && cidr('10.0.0.0/8').containsIP(ip(self))", "must be an IPv4 address in 10.0.0.0/8"))),
			obj:  `{"spec":{"f":"192.168.0.1"}}`,
			want: []string{`spec.f: Invalid value: "192.168.0.1": must be an IPv4 address in 10.0.0.0/8`}},
		{name: "ip/cidr: not an IP", schema: field1(rules(str(), ruleMsg("isIP(self) && ip(self).family() == 4 && cidr('10.0.0.0/8').containsIP(ip(self))", "must be an IPv4 address in 10.0.0.0/8"))),
			obj:  `{"spec":{"f":"fd00::1"}}`,
			want: []string{`spec.f: Invalid value: "fd00::1": must be an IPv4 address in 10.0.0.0/8`}},

		{name: "format dns1123Label: ok", schema: field1(rules(str(), rule("!format.dns1123Label().validate(self).hasValue()"))),
			obj: `{"spec":{"f":"my-name"}}`},
		{name: "format dns1123Label: bad", schema: field1(rules(str(), apiextv1.ValidationRule{
			Rule:              "!format.dns1123Label().validate(self).hasValue()",
			MessageExpression: `format.dns1123Label().validate(self).value().join(", ")`})),
			obj:  `{"spec":{"f":"My_Name"}}`,
			want: []string{`spec.f: Invalid value: "My_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},

		{name: "optionalOldSelf: create", schema: field1(rules(intg(), apiextv1.ValidationRule{
			Rule: "!oldSelf.hasValue() || self >= oldSelf.value()", Message: "may only grow", OptionalOldSelf: ptr(true)})),
			obj: `{"spec":{"f":1}}`},
		{name: "optionalOldSelf: grows", schema: field1(rules(intg(), apiextv1.ValidationRule{
			Rule: "!oldSelf.hasValue() || self >= oldSelf.value()", Message: "may only grow", OptionalOldSelf: ptr(true)})),
			obj: `{"spec":{"f":2}}`, old: `{"spec":{"f":1}}`},
		{name: "optionalOldSelf: shrinks", schema: field1(rules(intg(), apiextv1.ValidationRule{
			Rule: "!oldSelf.hasValue() || self >= oldSelf.value()", Message: "may only grow", OptionalOldSelf: ptr(true)})),
			obj: `{"spec":{"f":0}}`, old: `{"spec":{"f":1}}`,
			want: []string{"spec.f: Invalid value: 0: may only grow"}},
		// kube evaluates messageExpression with the plain oldSelf, so a
		// message reading the optional one fails and message is used.
		{name: "optionalOldSelf: message reading oldSelf falls back on update", schema: field1(rules(intg(), apiextv1.ValidationRule{
			Rule: "!oldSelf.hasValue() || self >= oldSelf.value()", Message: "may only grow", OptionalOldSelf: ptr(true),
			MessageExpression: `"was " + string(oldSelf.value())`})),
			obj: `{"spec":{"f":0}}`, old: `{"spec":{"f":1}}`,
			want: []string{"spec.f: Invalid value: 0: may only grow"}},
		{name: "optionalOldSelf: message reading oldSelf falls back on create", schema: field1(rules(str(), apiextv1.ValidationRule{
			Rule: "oldSelf.hasValue() || self == 'initial'", Message: "must start as initial", OptionalOldSelf: ptr(true),
			MessageExpression: `oldSelf.hasValue() ? "changed" : "created as " + self`})),
			obj:  `{"spec":{"f":"later"}}`,
			want: []string{`spec.f: Invalid value: "later": must start as initial`}},
		{name: "optionalOldSelf: message not reading oldSelf", schema: field1(rules(str(), apiextv1.ValidationRule{
			Rule: "oldSelf.hasValue() || self == 'initial'", Message: "must start as initial", OptionalOldSelf: ptr(true),
			MessageExpression: `"created as " + self`})),
			obj:  `{"spec":{"f":"later"}}`,
			want: []string{`spec.f: Invalid value: "later": created as later`}},
		{name: "optionalOldSelf: runs on create", schema: field1(rules(str(), apiextv1.ValidationRule{
			Rule: "oldSelf.hasValue() || self == 'initial'", Message: "must start as initial", OptionalOldSelf: ptr(true)})),
			obj:  `{"spec":{"f":"later"}}`,
			want: []string{`spec.f: Invalid value: "later": must start as initial`}},

		{name: "root: apiVersion, kind, metadata.name", schema: withRoot,
			obj: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"ab-1"},"spec":{"prefix":"ab-"}}`},
		{name: "root: bad name and kind", schema: withRoot,
			obj: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"x"},"spec":{"prefix":"ab-"}}`,
			want: []string{
				"<nil>: Invalid value: name must start with spec.prefix",
				"<nil>: Invalid value: wrong type",
			}},
		{name: "embedded resource", schema: embedded,
			obj: `{"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}}}`},
		{name: "embedded resource: wrong kind", schema: embedded,
			obj:  `{"spec":{"template":{"apiVersion":"v1","kind":"Service","metadata":{"name":"p"}}}}`,
			want: []string{"spec.template: Invalid value: must be a named Pod"}},

		{name: "map list: items correlate by key", schema: ports,
			obj: `{"spec":{"ports":[{"name":"b","port":2},{"name":"a","port":1},{"name":"c","port":3}]}}`,
			old: `{"spec":{"ports":[{"name":"a","port":1},{"name":"b","port":2}]}}`},
		{name: "map list: changed item", schema: ports,
			obj:  `{"spec":{"ports":[{"name":"b","port":2},{"name":"a","port":5}]}}`,
			old:  `{"spec":{"ports":[{"name":"a","port":1},{"name":"b","port":2}]}}`,
			want: []string{"spec.ports[1]: Invalid value: port is immutable"}},
		{name: "atomic list: items do not correlate", schema: ports,
			obj: `{"spec":{"atomic":[{"port":5}]}}`,
			old: `{"spec":{"atomic":[{"port":1}]}}`},
		{name: "map: values correlate by key", schema: ports,
			obj:  `{"spec":{"byName":{"a":1,"b":3,"c":4}}}`,
			old:  `{"spec":{"byName":{"a":1,"b":2}}}`,
			want: []string{"spec.byName[b]: Invalid value: 3: immutable"}},

		{name: "int-or-string", schema: field1(rules(S{XIntOrString: true}, rule("type(self) == int ? self < 10 : self.endsWith('%')"))),
			obj: `{"spec":{"f":"50%"}}`},
		{name: "int-or-string: bad int", schema: field1(rules(S{XIntOrString: true}, rule("type(self) == int ? self < 10 : self.endsWith('%')"))),
			obj:  `{"spec":{"f":12}}`,
			want: []string{"spec.f: Invalid value: 12: failed rule: type(self) == int ? self < 10 : self.endsWith('%')"}},
		{name: "runtime error", schema: limits(rule("self.x / self.maxLimit > 0")),
			obj:  `{"spec":{"x":1,"maxLimit":0}}`,
			want: []string{`spec: Invalid value: "object": division by zero evaluating rule: self.x / self.maxLimit > 0`}},

		{name: "allOf rules", schema: root(allOf), obj: `{"spec":{"a":1}}`},
		{name: "allOf rules: failing", schema: root(allOf),
			obj:  `{"spec":{"a":11}}`,
			want: []string{"spec: Invalid value: a below 10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := NewValidator(tc.schema, true, PerCallLimit)
			if v == nil {
				t.Fatal("no validator")
			}
			errs, left := v.Validate(context.Background(), nil, obj(t, tc.obj), obj(t, tc.old), RuntimeCELCostBudget)
			checkErrors(t, errs, tc.want)
			if left < 0 || left > RuntimeCELCostBudget {
				t.Errorf("remaining budget %d", left)
			}
		})
	}
}

func TestNewValidatorWithoutRules(t *testing.T) {
	v := NewValidator(root(object(map[string]S{"a": str()})), true, PerCallLimit)
	if v != nil {
		t.Fatal("validator for a schema without rules")
	}
	errs, left := v.Validate(context.Background(), nil, map[string]any{}, nil, 10)
	if errs != nil || left != 10 {
		t.Fatalf("nil validator: %v, %d", errs, left)
	}
}

func TestValidateBudget(t *testing.T) {
	s := root(object(map[string]S{
		"list": rules(listMax(intg(), 1000), rule("self.all(x, x >= 0)")),
		"n":    rules(intg(), rule("self >= 0")),
	}))
	items := "["
	for i := 0; i < 200; i++ {
		if i > 0 {
			items += ","
		}
		items += "1"
	}
	items += "]"
	o := obj(t, `{"spec":{"list":`+items+`,"n":1}}`)

	tests := []struct {
		name         string
		perCallLimit uint64
		budget       int64
		want         []string
	}{
		{name: "enough", perCallLimit: PerCallLimit, budget: RuntimeCELCostBudget},
		{name: "budget runs out", perCallLimit: PerCallLimit, budget: 10,
			want: []string{`spec.list: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run`}},
		{name: "per call limit", perCallLimit: 20, budget: RuntimeCELCostBudget,
			want: []string{`spec.list: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, x >= 0)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := NewValidator(s, true, tc.perCallLimit)
			errs, left := v.Validate(context.Background(), nil, o, nil, tc.budget)
			checkErrors(t, errs, tc.want)
			if (len(tc.want) > 0) != (left < 0) {
				t.Errorf("remaining budget %d", left)
			}
		})
	}
}

func TestValidateRatcheting(t *testing.T) {
	s := root(object(map[string]S{
		"a": rules(intg(), rule("self < 10")),
		"b": rules(intg(), rule("self < 10")),
	}))
	v := NewValidator(s, true, PerCallLimit)
	o := obj(t, `{"spec":{"a":20,"b":30}}`)
	old := obj(t, `{"spec":{"a":20,"b":5}}`)
	var warnings []string
	errs, _ := v.Validate(context.Background(), nil, o, old, RuntimeCELCostBudget,
		WithRatcheting(NewCorrelatedObject(o, old, s), func(w string) { warnings = append(warnings, w) }))
	checkErrors(t, errs, []string{"spec.b: Invalid value: 30: failed rule: self < 10"})
	if len(warnings) != 1 || warnings[0] != "spec.a: Invalid value: 20: failed rule: self < 10" {
		t.Errorf("warnings: %q", warnings)
	}
}

func TestValidateConcurrent(t *testing.T) {
	s := root(rules(object(map[string]S{"a": intg()}), rule("self.a < 10")))
	v := NewValidator(s, true, PerCallLimit)
	done := make(chan field.ErrorList)
	for i := 0; i < 8; i++ {
		go func() {
			errs, _ := v.Validate(context.Background(), nil, obj(t, `{"spec":{"a":11}}`), nil, RuntimeCELCostBudget)
			done <- errs
		}()
	}
	for i := 0; i < 8; i++ {
		checkErrors(t, <-done, []string{"spec: Invalid value: failed rule: self.a < 10"})
	}
}
