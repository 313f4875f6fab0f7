package cel

import (
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Builders of structural schemas for the tests.

type S = schema.Structural

func object(props map[string]S) S { return S{Type: "object", Properties: props} }

func str() S  { return S{Type: "string"} }
func num() S  { return S{Type: "number"} }
func intg() S { return S{Type: "integer"} }

func strMax(n int64) S {
	return S{Type: "string", ValueValidation: &schema.ValueValidation{MaxLength: &n}}
}

func list(items S) S { return S{Type: "array", Items: &items} }

func listMax(items S, n int64) S {
	s := list(items)
	s.ValueValidation = &schema.ValueValidation{MaxItems: &n}
	return s
}

func mapList(items S, keys ...string) S {
	s := list(items)
	s.XListType = "map"
	s.XListMapKeys = keys
	return s
}

func mapOf(values S) S { return S{Type: "object", AdditionalProperties: &values} }

func rules(s S, rs ...apiextv1.ValidationRule) S {
	s.XValidations = append(s.XValidations, rs...)
	return s
}

func rule(expr string) apiextv1.ValidationRule { return apiextv1.ValidationRule{Rule: expr} }

func ruleMsg(expr, msg string) apiextv1.ValidationRule {
	return apiextv1.ValidationRule{Rule: expr, Message: msg}
}

func ptr[T any](v T) *T { return &v }

// root is a custom resource schema with spec and status.
func root(spec S) *S {
	s := object(map[string]S{
		"apiVersion": str(),
		"kind":       str(),
		"metadata":   {Type: "object"},
		"spec":       spec,
	})
	return &s
}

// obj decodes JSON as the API server decodes custom resources: integers
// as int64, other numbers as float64.
func obj(t testing.TB, js string) any {
	t.Helper()
	if js == "" {
		return nil
	}
	var v any
	if err := utiljson.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", js, err)
	}
	return v
}

// checkErrors compares errors by their full text; a wanted string ending
// in "..." matches any error text it starts.
func checkErrors(t testing.TB, got field.ErrorList, want []string) {
	t.Helper()
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Error())
	}
	if len(texts) != len(want) {
		t.Fatalf("got %d errors, want %d:\n got: %s\nwant: %s", len(texts), len(want), strings.Join(texts, "\n      "), strings.Join(want, "\n      "))
	}
	for i := range want {
		if p, ok := strings.CutSuffix(want[i], "..."); ok {
			if !strings.HasPrefix(texts[i], p) {
				t.Errorf("error %d:\n got: %s\nwant: %s", i, texts[i], want[i])
			}
		} else if texts[i] != want[i] {
			t.Errorf("error %d:\n got: %s\nwant: %s", i, texts[i], want[i])
		}
	}
}

// nestedRules is a value validation with rs in its first allOf item.
func nestedRules(rs ...apiextv1.ValidationRule) *schema.ValueValidation {
	return &schema.ValueValidation{AllOf: []schema.NestedValueValidation{{XValidations: rs}}}
}
