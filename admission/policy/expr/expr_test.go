package expr

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// TestCompile: the type an expression must have, the variables each Decls
// declares, and kube's messages for what does not compile.
func TestCompile(t *testing.T) {
	for _, tc := range []struct {
		name string
		expr string
		d    Decls
		want []*cel.Type
		err  string // "": compiles
	}{
		{name: "bool", expr: "object.metadata.name == 'x'", want: []*cel.Type{cel.BoolType}},
		{name: "any type", expr: "1 + 1"},
		{name: "any type asked for", expr: "1 + 1", want: []*cel.Type{cel.AnyType}},
		{name: "wrong type", expr: "1 + 1", want: []*cel.Type{cel.BoolType}, err: "must evaluate to bool but got int"},
		{name: "none of the types", expr: "1 + 1", want: []*cel.Type{cel.BoolType, cel.StringType},
			err: "must evaluate to one of [bool string] but got int"},
		{name: "syntax error", expr: "1 +",
			err: "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^"},
		{name: "params undeclared", expr: "params.x == 1",
			err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"},
		{name: "params declared", expr: "params.x == 1", d: Decls{Params: true}, want: []*cel.Type{cel.BoolType}},
		{name: "authorizer undeclared", expr: "authorizer.group('').resource('pods').check('get').allowed()",
			err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.group('').resource('pods').check('get').allowed()\n | ^"},
		{name: "authorizer declared", expr: "authorizer.group('').resource('pods').check('get').allowed()", d: Decls{Authorizer: true},
			want: []*cel.Type{cel.BoolType}},
		{name: "request is typed", expr: "request.nope",
			err: "compilation failed: ERROR: <input>:1:8: undefined field 'nope'\n | request.nope\n | .......^"},
		{name: "namespaceObject is typed", expr: "namespaceObject.metadata.name", want: []*cel.Type{cel.StringType}},
		{name: "no variables without them", expr: "variables.x",
			err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewCompiler(false).Compile(tc.expr, tc.d, false, tc.want...)
			if tc.err == "" {
				if r.Err != nil || r.Program == nil {
					t.Fatalf("Compile = %v, program %v", r.Err, r.Program)
				}
				return
			}
			if r.Err == nil || r.Err.Type != apiservercel.ErrorTypeInvalid || r.Err.Detail != tc.err {
				t.Errorf("Compile error %#v\nwant Invalid %q", r.Err, tc.err)
			}
			if r.Program != nil {
				t.Error("a program for an expression that does not compile")
			}
		})
	}
}

// TestVariables: a variable is declared, with its type, for what is
// compiled after it; one that does not compile is dyn.
func TestVariables(t *testing.T) {
	c := NewCompiler(true)
	if r := c.AddVariable("n", "1", Decls{}, false); r.Err != nil || !r.OutputType.IsExactType(cel.IntType) {
		t.Fatalf("variable n: %v %v", r.Err, r.OutputType)
	}
	if r := c.AddVariable("names", "['a', 'b']", Decls{}, false); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := c.AddVariable("broken", "1 +", Decls{}, false); r.Err == nil {
		t.Fatal("a variable that does not compile compiled")
	}
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{"variables.n + 1 == 2", true},
		{"variables.names.exists(x, x == 'a')", true},
		{"variables.broken == 1", true},
		{"variables.n == 'a'", false},
		{"variables.names[0] + 1 == 2", false},
		{"variables.missing", false},
	} {
		if r := c.Compile(tc.expr, Decls{}, false, cel.BoolType); (r.Err == nil) != tc.ok {
			t.Errorf("%s: %v, want compiled %t", tc.expr, r.Err, tc.ok)
		}
	}
	fields := c.VariablesType().Fields
	if got := fields["n"].Type; got != apiservercel.IntType {
		t.Errorf("n declared %v, want int", got.CelType())
	}
	if got := fields["names"].Type.CelType().String(); got != "list(string)" {
		t.Errorf("names declared %s, want list(string)", got)
	}
	if got := fields["broken"].Type; got != apiservercel.DynType {
		t.Errorf("broken declared %v, want dyn", got.CelType())
	}
	if NewCompiler(false).VariablesType() != nil {
		t.Error("a compiler without variables has a variables type")
	}
}

// TestDeclTypeOf: scalars, lists and maps keep their types; anything else
// is dyn.
func TestDeclTypeOf(t *testing.T) {
	for _, tc := range []struct {
		in   *cel.Type
		want string
	}{
		{nil, "dyn"},
		{cel.BoolType, "bool"},
		{cel.StringType, "string"},
		{cel.TimestampType, "google.protobuf.Timestamp"},
		{cel.ListType(cel.IntType), "list(int)"},
		{cel.MapType(cel.StringType, cel.ListType(cel.StringType)), "map(string, list(string))"},
		{cel.ObjectType("kubernetes.Thing"), "dyn"},
	} {
		if got := declTypeOf(tc.in).CelType().String(); got != tc.want {
			t.Errorf("declTypeOf(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCheck: type checking reports the issues, without a wanted type.
func TestCheck(t *testing.T) {
	c := NewCompiler(true)
	if err := c.Check("object.spec.replicas > 1", Decls{}); err != nil {
		t.Errorf("a valid expression: %v", err)
	}
	err := c.Check("request.nope", Decls{})
	if err == nil || err.Type != apiservercel.ErrorTypeInvalid || err.Detail != "ERROR: <input>:1:8: undefined field 'nope'\n | request.nope\n | .......^" {
		t.Errorf("an undefined field: %#v", err)
	}
}

// TestJSONValue: objects as expressions see them.
func TestJSONValue(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	if v, err := JSONValue(nil, gvk); v != nil || err != nil {
		t.Errorf("no object: %v, %v", v, err)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{"a": "b"}}
	cm.Name, cm.Generation = "cm", 3
	v, err := JSONValue(cm, gvk)
	want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "generation": int64(3)}, "data": map[string]any{"a": "b"}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("a typed object: %#v, %v\nwant %#v", v, err, want)
	}
	cm.APIVersion, cm.Kind = "v9", "Other"
	if v, _ := JSONValue(cm, gvk); v.(map[string]any)["kind"] != "Other" || v.(map[string]any)["apiVersion"] != "v9" {
		t.Errorf("an object's own kind was replaced: %v", v)
	}
	if v, _ := JSONValue(&corev1.ConfigMap{}, schema.GroupVersionKind{}); v.(map[string]any)["kind"] != nil {
		t.Errorf("a kind was made up: %v", v)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Thing", "spec": map[string]any{"n": int64(1)}}}
	if v, err := JSONValue(u, gvk); err != nil || !reflect.DeepEqual(v, u.Object) {
		t.Errorf("unstructured: %v, %v", v, err)
	}
}

// TestRequestValue: kube's AdmissionRequest without the objects, its
// empty optional fields left out.
func TestRequestValue(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	a := &admission.Attributes{Operation: admission.Update, Kind: deployment, Resource: deployments, Subresource: "scale",
		Namespace: "ns", Name: "d", DryRun: true,
		Requested: &admission.Attributes{Kind: schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"},
			Resource: schema.GroupVersionResource{Group: "apps", Version: "v1beta1", Resource: "deployments"}}}
	user := &authn.User{Name: "alice", UID: "u1", Groups: []string{"dev"}, Extra: map[string][]string{"scope": {"a", "b"}}}
	opts := map[string]any{"kind": "UpdateOptions"}
	want := map[string]any{
		"kind":               map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"},
		"resource":           map[string]any{"group": "apps", "version": "v1", "resource": "deployments"},
		"subResource":        "scale",
		"requestKind":        map[string]any{"group": "apps", "version": "v1beta1", "kind": "Deployment"},
		"requestResource":    map[string]any{"group": "apps", "version": "v1beta1", "resource": "deployments"},
		"requestSubResource": "scale",
		"name":               "d", "namespace": "ns", "operation": "UPDATE", "dryRun": true, "options": opts,
		"userInfo": map[string]any{"username": "alice", "uid": "u1", "groups": []any{"dev"}, "extra": map[string]any{"scope": []any{"a", "b"}}},
	}
	if got := RequestValue(a, user, opts); !reflect.DeepEqual(got, want) {
		t.Errorf("RequestValue =\n%#v\nwant\n%#v", got, want)
	}

	nodes := &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("Node"),
		Resource: corev1.SchemeGroupVersion.WithResource("nodes")}
	want = map[string]any{
		"kind":            map[string]any{"group": "", "version": "v1", "kind": "Node"},
		"resource":        map[string]any{"group": "", "version": "v1", "resource": "nodes"},
		"requestKind":     map[string]any{"group": "", "version": "v1", "kind": "Node"},
		"requestResource": map[string]any{"group": "", "version": "v1", "resource": "nodes"},
		"operation":       "CREATE", "dryRun": false, "options": nil, "userInfo": map[string]any{},
	}
	if got := RequestValue(nodes, &authn.User{}, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("a cluster-scoped create by a user with no fields =\n%#v\nwant\n%#v", got, want)
	}
	if got := RequestValue(nodes, nil, nil)["userInfo"]; !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("no user: userInfo %v", got)
	}
}

// TestRequestValueInCEL: has() and reads of the fields a cluster-scoped
// request leaves out answer as kube's do.
func TestRequestValueInCEL(t *testing.T) {
	vars := map[string]any{RequestVar: RequestValue(&admission.Attributes{Operation: admission.Create, Name: "n"}, nil, nil)}
	for expression, want := range map[string]any{
		"has(request.namespace)":    false,
		"has(request.name)":         true,
		"has(request.userInfo.uid)": false,
		"request.namespace == ''":   "no such key: namespace",
	} {
		r := NewCompiler(false).Compile(expression, Decls{}, false)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		out, _, err := r.Program.Eval(vars)
		got := any(nil)
		if err != nil {
			got = err.Error()
		} else {
			got = out.Value()
		}
		if got != want {
			t.Errorf("%s = %v, want %v", expression, got, want)
		}
	}
}

// TestAuthorizerValues: the authorizer variables ask capstan's authorizer
// as the write's user; without an authorizer there are none.
func TestAuthorizerValues(t *testing.T) {
	if v := AuthorizerValues(nil, nil, &admission.Attributes{}); len(v) != 0 {
		t.Errorf("no authorizer: %v", v)
	}
	var asked []authz.Attributes
	az := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		asked = append(asked, a)
		switch a.Info.Verb {
		case "create", "get":
			return authz.Allow, "", nil
		case "list":
			return authz.NoOpinion, "", nil
		}
		return authz.Deny, "not you", nil
	})
	alice := &authn.User{Name: "alice", UID: "u1", Groups: []string{"dev"}}
	write := &admission.Attributes{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: "status", Namespace: "ns", Name: "p"}
	vars := AuthorizerValues(az, alice, write)
	for _, tc := range []struct {
		expr string
		want any
		info request.Info
	}{
		{"authorizer.group('apps').resource('deployments').namespace('ns').name('d').check('create').allowed()", true,
			request.Info{IsResourceRequest: true, Verb: "create", APIGroup: "apps", APIVersion: "*", Resource: "deployments", Namespace: "ns", Name: "d"}},
		{"authorizer.requestResource.check('update').reason()", "not you",
			request.Info{IsResourceRequest: true, Verb: "update", APIVersion: "*", Resource: "pods", Subresource: "status", Namespace: "ns", Name: "p"}},
		{"authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=web').check('list').allowed()", false,
			request.Info{IsResourceRequest: true, Verb: "list", APIVersion: "*", Resource: "pods", FieldSelector: "spec.nodeName=n1", LabelSelector: "app=web"}},
		{"authorizer.path('/healthz').check('get').allowed()", true, request.Info{Verb: "get", Path: "/healthz"}},
	} {
		asked = nil
		r := NewCompiler(false).Compile(tc.expr, Decls{Authorizer: true}, false)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		out, _, err := r.Program.Eval(vars)
		if err != nil || out.Value() != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.expr, out, err, tc.want)
		}
		if len(asked) != 1 {
			t.Errorf("%s asked the authorizer %d times, want once", tc.expr, len(asked))
			continue
		}
		if u := asked[0].User; !reflect.DeepEqual(*asked[0].Info, tc.info) || u.Name != "alice" || u.UID != "u1" || !reflect.DeepEqual(u.Groups, []string{"dev"}) {
			t.Errorf("%s asked %+v as %+v", tc.expr, *asked[0].Info, *u)
		}
	}
}
