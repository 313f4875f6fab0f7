package cel

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const schemaPath = "spec.versions[0].schema.openAPIV3Schema"

var openAPIV3SchemaPath = field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema")

func TestValidateRules(t *testing.T) {
	spec := func(rs ...apiextv1.ValidationRule) *S {
		return root(rules(object(map[string]S{
			"minReplicas": intg(),
			"replicas":    intg(),
			"name":        strMax(63),
			"names":       listMax(strMax(63), 16),
			"labels":      mapOf(str()),
		}), rs...))
	}
	prop := func(name string, s S) *S { return root(object(map[string]S{name: s})) }
	bad := apiextv1.FieldValueErrorReason("FieldValueBad")
	forbidden := apiextv1.FieldValueForbidden
	total := func(path string) []string {
		return []string{
			path + ": Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
			schemaPath + ": Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
		}
	}
	specRule := schemaPath + ".properties[spec].x-kubernetes-validations[0]"

	tests := []struct {
		name string
		s    *S
		opts CompileOptions
		want []string
	}{
		{name: "documentation examples compile", s: spec(
			rule("self.minReplicas <= self.replicas"),
			ruleMsg("self.name == oldSelf.name", "name is immutable"),
			apiextv1.ValidationRule{Rule: "self.replicas <= 100", MessageExpression: `"too many replicas for " + self.name`},
			apiextv1.ValidationRule{Rule: "self.replicas >= 0", Reason: &forbidden, FieldPath: ".replicas"},
			apiextv1.ValidationRule{Rule: "has(self.name)", FieldPath: ".labels['a.b']"},
			rule("self.names.isSorted()"),
			rule("self.names.all(n, n.matches('^[a-z]+$'))"),
			rule("isQuantity(self.name) && quantity(self.name).compareTo(quantity('1Gi')) <= 0"),
			rule("isURL(self.name) && url(self.name).getScheme() == 'https'"),
			rule("isIP(self.name) && cidr('10.0.0.0/8').containsIP(ip(self.name))"),
			rule("!format.dns1123Label().validate(self.name).hasValue()"),
			apiextv1.ValidationRule{Rule: "!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas", OptionalOldSelf: ptr(true)},
		)},
		{name: "root variables", s: &S{Type: "object", XValidations: apiextv1.ValidationRules{
			rule("self.metadata.name.startsWith('a') && self.kind == 'A' && self.apiVersion != '' && !has(self.metadata.generateName)"),
		}}},

		{name: "syntax error", s: spec(rule("self.minReplicas <=")),
			want: []string{specRule + `.rule: Invalid value: {"Rule":"self.minReplicas \u003c=","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:20: Syntax error: mismatched input '<EOF>' expecting...`}},
		{name: "unknown field", s: spec(rule("self.maxReplicas > 0")),
			want: []string{specRule + `.rule: Invalid value: {"Rule":"self.maxReplicas \u003e 0","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: undefined field 'maxReplicas'...`}},
		{name: "metadata other than name is not visible", s: &S{Type: "object", XValidations: apiextv1.ValidationRules{rule("self.metadata.labels.size() > 0")}},
			want: []string{schemaPath + `.x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.metadata.labels.size() \u003e 0",...`}},
		{name: "not a bool", s: spec(rule("self.replicas")),
			want: []string{specRule + `.rule: Invalid value: {"Rule":"self.replicas","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool`}},
		{name: "messageExpression does not compile", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", MessageExpression: "self.nope"}),
			want: []string{specRule + `.messageExpression: Invalid value: {"Rule":"self.replicas \u003e 0","Message":"","MessageExpression":"self.nope","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'...`}},
		{name: "messageExpression not a string", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", MessageExpression: "self.replicas"}),
			want: []string{specRule + `.messageExpression: Invalid value: {...`}},

		{name: "too expensive without maxItems and maxLength", s: prop("names", rules(list(str()), rule("self.all(x, x.matches('^[a-z]*$'))"))),
			want: append([]string{schemaPath + ".properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
				total(schemaPath+".properties[spec].properties[names].x-kubernetes-validations[0].rule")...)},
		{name: "bounded by maxItems and maxLength", s: prop("names", rules(listMax(strMax(64), 100), rule("self.all(x, x.matches('^[a-z]*$'))")))},
		{name: "expensive per item under unbounded list", s: prop("items", list(rules(strMax(1024*1024), rule("self.matches('^[a-z]*$')")))),
			want: append([]string{schemaPath + ".properties[spec].properties[items].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
				total(schemaPath+".properties[spec].properties[items].items.x-kubernetes-validations[0].rule")...)},
		{name: "per-expression cost suppressed for unchanged schemas", s: prop("names", rules(listMax(strMax(1024*1024), 10), rule("self.all(x, x.matches('^[a-z]*$'))"))),
			opts: CompileOptions{SuppressPerExpressionCost: true}},

		{name: "oldSelf under an atomic list", s: prop("list", list(rules(object(map[string]S{"a": intg()}), rule("self.a == oldSelf.a")))),
			want: []string{schemaPath + `.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self.a == oldSelf.a": oldSelf cannot be used on the uncorrelatable portion of the schema within ` + schemaPath + ".properties[spec].properties[list]"}},
		{name: "oldSelf under a set", s: prop("set", func() S { s := list(rules(intg(), rule("self == oldSelf"))); s.XListType = "set"; return s }()),
			want: []string{schemaPath + `.properties[spec].properties[set].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ` + schemaPath + ".properties[spec].properties[set]"}},
		{name: "oldSelf under a map list", s: prop("ports", mapList(rules(object(map[string]S{"name": str(), "port": intg()}), rule("self.port == oldSelf.port")), "name"))},
		{name: "oldSelf on the list itself", s: prop("list", rules(listMax(intg(), 10), rule("self == oldSelf")))},
		{name: "oldSelf under a map", s: prop("m", mapOf(rules(intg(), rule("self == oldSelf"))))},
		{name: "optionalOldSelf without oldSelf", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", OptionalOldSelf: ptr(true)}),
			want: []string{specRule + ".optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"}},

		{name: "unsupported reason", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", Reason: &bad}),
			want: []string{specRule + `.reason: Unsupported value: "FieldValueBad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`}},
		{name: "fieldPath not in the schema", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", FieldPath: ".nope"}),
			want: []string{specRule + `.fieldPath: Invalid value: ".nope": must be a valid path`}},
		{name: "fieldPath with index", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", FieldPath: ".names[0]"}),
			want: []string{specRule + `.fieldPath: Invalid value: ".names[0]": must be a valid path`}},
		{name: "rule fields checked first, no compilation then", s: spec(
			apiextv1.ValidationRule{Rule: "self.replicas >", FieldPath: "replicas"}),
			want: []string{specRule + `.fieldPath: Invalid value: "replicas": must be a valid path`}},
		{name: "empty rule", s: spec(rule("  ")),
			want: []string{specRule + ".rule: Required value: rule is not specified"}},
		{name: "blank message", s: spec(ruleMsg("self.replicas > 0", " ")),
			want: []string{specRule + `.message: Invalid value: " ": must be non-empty if specified`}},
		{name: "multi-line message", s: spec(ruleMsg("self.replicas > 0", "a\nb")),
			want: []string{specRule + `.message: Invalid value: "a\nb": must not contain line breaks`}},
		{name: "multi-line rule without message", s: spec(rule("self.replicas > 0 &&\nself.minReplicas > 0")),
			want: []string{specRule + ".message: Required value: message must be specified if rule contains line breaks"}},
		{name: "blank messageExpression", s: spec(apiextv1.ValidationRule{Rule: "self.replicas > 0", MessageExpression: " "}),
			want: []string{specRule + ".messageExpression: Required value: messageExpression must be non-empty if specified"}},

		{name: "new library function in a new rule", s: spec(rule("self.names.includes(['a'])")),
			want: []string{specRule + `.rule: Invalid value: {...`}},
		{name: "new library function in an existing rule", s: spec(rule("self.names.includes(['a'])")),
			opts: CompileOptions{Existing: existing(rule("self.names.includes(['a'])"))}},

		{name: "allOf rules are checked, not compiled", s: func() *S {
			s := root(object(map[string]S{"a": intg()}))
			sp := s.Properties["spec"]
			sp.ValueValidation = nestedRules(rule("self.nope > 0"), apiextv1.ValidationRule{Rule: "self.a > 0", Reason: &bad})
			s.Properties["spec"] = sp
			return s
		}(), want: []string{schemaPath + `.properties[spec].allOf[0].x-kubernetes-validations[1].reason: Unsupported value: "FieldValueBad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrors(t, ValidateRules(tc.s, openAPIV3SchemaPath, tc.opts), tc.want)
		})
	}
}

func TestValidateRulesTotalCost(t *testing.T) {
	// each rule is estimated at about 5M, under the 10M per expression;
	// 21 of them exceed the 100M of the whole schema
	props := map[string]S{}
	for i := 0; i < 21; i++ {
		props[fmt.Sprintf("l%02d", i)] = rules(listMax(intg(), 1000000), rule("self.all(x, x > 0)"))
	}
	want := []string{}
	for i := 0; i < 4; i++ {
		want = append(want, fmt.Sprintf("%s.properties[spec].properties[l%02d].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema", schemaPath, i))
	}
	want = append(want, schemaPath+": Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.050000x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
	checkErrors(t, ValidateRules(root(object(props)), openAPIV3SchemaPath, CompileOptions{}), want)

	// 19 stay under the limit
	delete(props, "l20")
	delete(props, "l19")
	checkErrors(t, ValidateRules(root(object(props)), openAPIV3SchemaPath, CompileOptions{}), nil)
}

func existing(rs ...apiextv1.ValidationRule) *Expressions {
	e := &Expressions{}
	e.Add(rs)
	return e
}
