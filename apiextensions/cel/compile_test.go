package cel

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestExistingExpressions(t *testing.T) {
	r := func(expr, msg string) apiextv1.ValidationRules {
		return apiextv1.ValidationRules{{Rule: expr, MessageExpression: msg}}
	}
	p := func(rs apiextv1.ValidationRules) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{XValidations: rs}
	}
	v1 := &apiextv1.JSONSchemaProps{
		Type:         "object",
		XValidations: r("root", "'m'"),
		Properties: map[string]apiextv1.JSONSchemaProps{
			"spec": {
				Items:                &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{XValidations: r("items", "")}},
				AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{XValidations: r("additional", "")}},
				AllOf:                []apiextv1.JSONSchemaProps{p(r("allOf", ""))},
				Not:                  &apiextv1.JSONSchemaProps{XValidations: r("not", "")},
			},
		},
	}
	crd := &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{Versions: []apiextv1.CustomResourceDefinitionVersion{
		{Name: "v1", Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: v1}},
		{Name: "v2"},
		{Name: "v3", Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{XValidations: r("v3", "'v3'")}}},
	}}}
	e := ExistingExpressions(crd)
	if want := sets.New("root", "items", "additional", "allOf", "not", "v3"); !e.Rules.Equal(want) {
		t.Errorf("rules %v, want %v", sets.List(e.Rules), sets.List(want))
	}
	if want := sets.New("'m'", "'v3'"); !e.MessageExpressions.Equal(want) {
		t.Errorf("message expressions %v, want %v", sets.List(e.MessageExpressions), sets.List(want))
	}
}
