package openapi

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
)

// The query parameters of each verb are the fields of its options type, as
// the handlers decode them, described by the types' own documentation.
var (
	listParams   = optionParams(metav1.ListOptions{})
	createParams = optionParams(metav1.CreateOptions{})
	updateParams = optionParams(metav1.UpdateOptions{})
	patchParams  = optionParams(metav1.PatchOptions{})
	deleteParams = optionParams(metav1.DeleteOptions{})
	// deletecollection takes list options to select, but does not watch.
	deleteCollectionParams = append(append([]common.Parameter(nil), deleteParams...),
		without(listParams, "watch", "allowWatchBookmarks")...)
)

var prettyParam = param{
	name: "pretty", kind: common.QueryParameterKind, dataType: "string",
	description: "If 'true', the output is indented for reading. Defaults to 'false', unless the user agent is a browser or a command-line HTTP tool (curl, wget).",
}

var namespaceParam = param{
	name: "namespace", kind: common.PathParameterKind, dataType: "string", required: true,
	description: "the namespace of the object, which scopes its name and who may reach it",
}

func nameParam(kind string) param {
	return param{
		name: "name", kind: common.PathParameterKind, dataType: "string", required: true,
		description: "name of the " + kind,
	}
}

func bodyParam(m model, required bool) param {
	return param{name: "body", kind: common.BodyParameterKind, dataType: string(m), required: required}
}

// documented is what the options types implement to describe their fields.
type documented interface{ SwaggerDoc() map[string]string }

// optionParams makes a query parameter of each top-level field of an
// options struct that has a simple type and a JSON name: nested structs
// (TypeMeta, Preconditions) are sent in bodies, not queries.
func optionParams(options documented) []common.Parameter {
	docs := options.SwaggerDoc()
	t := reflect.TypeOf(options)
	var out []common.Parameter
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		dataType := simpleType(f.Type)
		if name == "" || dataType == "" {
			continue
		}
		out = append(out, param{name: name, kind: common.QueryParameterKind, dataType: dataType, description: docs[name]})
	}
	return out
}

// simpleType is the JSON type of a query parameter's Go type, or "" for
// types that are not sent as query parameters.
func simpleType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice {
		t = t.Elem() // repeated parameters: dryRun=All
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	}
	return ""
}

func without(params []common.Parameter, names ...string) []common.Parameter {
	var out []common.Parameter
	for _, p := range params {
		skip := false
		for _, n := range names {
			skip = skip || p.Name() == n
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}
