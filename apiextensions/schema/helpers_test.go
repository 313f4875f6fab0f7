package schema

import (
	"encoding/json"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// props decodes a JSONSchemaProps written in YAML.
func props(t *testing.T, y string) *apiextv1.JSONSchemaProps {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	p := &apiextv1.JSONSchemaProps{}
	if err := json.Unmarshal(js, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// structural decodes a schema written in YAML and converts it.
func structural(t *testing.T, y string) *Structural {
	t.Helper()
	s, err := NewStructural(props(t, y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// value decodes a JSON value written in YAML as kube decodes bodies
// (integers as int64).
func value(t *testing.T, y string) any {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := utiljson.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func object(t *testing.T, y string) map[string]any {
	t.Helper()
	if y == "" {
		return nil
	}
	return value(t, y).(map[string]any)
}
