package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestRequestNames(t *testing.T) {
	names := requestNamesOf(&resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{}},
		{Name: "b", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "x"}}},
	}})
	for name, want := range map[string]bool{"a": true, "b": true, "b/x": true, "b/y": false, "a/x": false, "c": false, "b/x/z": false} {
		if got := names.has(name); got != want {
			t.Errorf("has(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPureChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		errs field.ErrorList
		want string // "" for none, else a substring of the first error
	}{
		{"uid", validateUID("6f1c1b0e-2a43-4c2e-9c53-2b1f6a3d0c11", field.NewPath("u")), ""},
		{"uid upper", validateUID("6F1C1B0E-2A43-4C2E-9C53-2B1F6A3D0C11", field.NewPath("u")), "RFC 4122 normalized form"},
		{"qualified", validateQualifiedName("example.com/model", field.NewPath("q")), ""},
		{"qualified no domain", validateQualifiedName("/model", field.NewPath("q")), "the domain must not be empty"},
		{"fully qualified", validateFullyQualifiedName("model", field.NewPath("q")), "a fully qualified name must be a domain"},
		{"pool", validatePoolName("a/b", field.NewPath("p")), ""},
		{"pool empty", validatePoolName("", field.NewPath("p")), "Required value"},
		{"version", validateAttribute(resourcev1.DeviceAttribute{VersionValue: ptr.To("1.2.3-rc.1+b")}, field.NewPath("a")), ""},
		{"not semver", validateAttribute(resourcev1.DeviceAttribute{VersionValue: ptr.To("1.2")}, field.NewPath("a")), "semver.org"},
		{"two values", validateAttribute(resourcev1.DeviceAttribute{IntValue: ptr.To[int64](1), BoolValue: ptr.To(true)}, field.NewPath("a")),
			"exactly one value must be specified"},
		{"cel", validateCELExpression(`device.driver == "x"`, field.NewPath("e"), false), ""},
		{"cel syntax", validateCELExpression(`device.driver ==`, field.NewPath("e"), false), "compilation failed"},
		{"cel stored", validateCELExpression(`device.driver ==`, field.NewPath("e"), true), ""},
		{"cel typed", validateCELExpression(`device.attributes["a.example.com"].model == "x"`, field.NewPath("e"), false), ""},
		{"cel field", validateCELExpression(`device.model == "x"`, field.NewPath("e"), false), "undefined field 'model'"},
		{"cel not bool", validateCELExpression(`device.driver`, field.NewPath("e"), false), "must evaluate to bool"},
		{"cel empty", validateCELExpression(` `, field.NewPath("e"), false), "Syntax error"},
		{"json object", validateRawExtension(rawOf(`{"a":1}`), field.NewPath("r"), false, 10), ""},
		{"json list", validateRawExtension(rawOf(`[1]`), field.NewPath("r"), false, 10), "must be a valid JSON object"},
		{"json long", validateRawExtension(rawOf(`{"a":"0123456789"}`), field.NewPath("r"), false, 10), "Too long"},
		{"json long stored", validateRawExtension(rawOf(`{"a":"0123456789"}`), field.NewPath("r"), true, 10), ""},
		{"binding without failures", validateBindingConditions([]string{"a"}, nil, field.NewPath("d")), "bindingFailureConditions are required"},
	} {
		switch {
		case c.want == "" && len(c.errs) != 0:
			t.Errorf("%s: errors %v", c.name, c.errs)
		case c.want != "" && (len(c.errs) == 0 || !strings.Contains(c.errs[0].Error(), c.want)):
			t.Errorf("%s: errors %v, want %q", c.name, c.errs, c.want)
		}
	}
	if got := shorten(strings.Repeat("a", 40)+"b", 20); len(got) != 20 || !strings.Contains(got, "...") {
		t.Errorf("shorten = %q", got)
	}
}

func rawOf(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
