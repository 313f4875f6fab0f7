package openapi

import (
	"net/http"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/common"
)

// Models of the meta types operations read and write.
var (
	statusModel     = model(metav1.Status{}.OpenAPIModelName())
	watchEventModel = model(metav1.WatchEvent{}.OpenAPIModelName())
	patchModel      = model(metav1.Patch{}.OpenAPIModelName())
	deleteModel     = model(metav1.DeleteOptions{}.OpenAPIModelName())
)

// patchTypes are the media types a patch body may have: apply patches
// come in CBOR too where the server speaks CBOR.
func patchTypes(mediaTypes []string) []string {
	out := []string{
		string(types.JSONPatchType), string(types.MergePatchType),
		string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType),
	}
	if slices.Contains(mediaTypes, runtime.ContentTypeCBOR) {
		out = append(out, string(types.ApplyCBORPatchType))
	}
	return out
}

// An operation is one REST operation on a resource, as kube documents it.
type operation struct {
	action string // x-kubernetes-action
	method string
	// The operation id is idVerb + group version + idInfix + what it acts
	// on + idSuffix.
	idVerb, idInfix, idSuffix string
	// describe says what the operation does to objects of a kind; sub is
	// the subresource, if any.
	describe func(kind, sub string) string
	query    []common.Parameter
	// body is the request body's model and whether it is required.
	body func(r *resource) (model, bool)
	// responses are the models of the status codes.
	responses func(r *resource) []common.StatusCodeResponse
	stream    bool // also answers in the watch media types
}

// operations by their x-kubernetes-action.
var operations = map[string]operation{
	"get": {action: "get", method: http.MethodGet, idVerb: "read",
		describe:  about("read the %s named in the path", "read %[2]s of the %[1]s named in the path"),
		responses: ok(func(r *resource) model { return r.object })},
	"list": {action: "list", method: http.MethodGet, idVerb: "list", query: listParams, stream: true,
		describe:  about("list or watch objects of kind %s", "list or watch %[2]s of objects of kind %[1]s"),
		responses: ok(func(r *resource) model { return r.list })},
	"put": {action: "put", method: http.MethodPut, idVerb: "replace", query: updateParams,
		describe: about("replace the %s named in the path", "replace %[2]s of the %[1]s named in the path"),
		body:     objectBody, responses: codes(http.StatusOK, http.StatusCreated)},
	"patch": {action: "patch", method: http.MethodPatch, idVerb: "patch", query: patchParams,
		describe:  about("partially update the %s named in the path", "partially update %[2]s of the %[1]s named in the path"),
		body:      func(*resource) (model, bool) { return patchModel, true },
		responses: codes(http.StatusOK, http.StatusCreated)},
	"post": {action: "post", method: http.MethodPost, idVerb: "create", query: createParams,
		describe: func(kind, sub string) string {
			if sub != "" {
				return "create " + sub + " of " + article(kind) + kind
			}
			return "create " + article(kind) + kind
		},
		body: objectBody, responses: codes(http.StatusOK, http.StatusCreated, http.StatusAccepted)},
	"delete": {action: "delete", method: http.MethodDelete, idVerb: "delete", query: deleteParams,
		describe: func(kind, sub string) string {
			if sub != "" {
				return "delete " + sub + " of " + article(kind) + kind
			}
			return "delete " + article(kind) + kind
		},
		body:      deleteBody,
		responses: statusCodes(http.StatusOK, http.StatusAccepted)},
	"deletecollection": {action: "deletecollection", method: http.MethodDelete, idVerb: "delete", idInfix: "Collection",
		query: deleteCollectionParams, body: deleteBody, responses: statusCodes(http.StatusOK),
		describe: about("delete a collection of objects of kind %s", "delete a collection of %[2]s of objects of kind %[1]s")},
	"watch": {action: "watch", method: http.MethodGet, idVerb: "watch", query: listParams, stream: true,
		describe: about("watch changes to an object of kind %s; deprecated: list with the 'watch' parameter and a 'fieldSelector' on the name instead",
			"watch changes to %[2]s of an object of kind %[1]s; deprecated: list with the 'watch' parameter instead"),
		responses: ok(func(*resource) model { return watchEventModel })},
	"watchlist": {action: "watchlist", method: http.MethodGet, idVerb: "watch", idSuffix: "List", query: listParams, stream: true,
		describe: about("watch changes to a list of %s; deprecated: list with the 'watch' parameter instead",
			"watch changes to a list of %[2]s of %[1]s; deprecated: list with the 'watch' parameter instead"),
		responses: ok(func(*resource) model { return watchEventModel })},
}

func objectBody(r *resource) (model, bool) { return r.object, true }
func deleteBody(*resource) (model, bool)   { return deleteModel, false }

// ok answers 200 with one model.
func ok(m func(r *resource) model) func(r *resource) []common.StatusCodeResponse {
	return func(r *resource) []common.StatusCodeResponse {
		return []common.StatusCodeResponse{response{code: http.StatusOK, message: "OK", model: m(r)}}
	}
}

// codes answer the object with each status code.
func codes(cs ...int) func(r *resource) []common.StatusCodeResponse {
	return func(r *resource) []common.StatusCodeResponse { return responses(r.object, cs) }
}

// statusCodes answer a Status with each status code.
func statusCodes(cs ...int) func(r *resource) []common.StatusCodeResponse {
	return func(*resource) []common.StatusCodeResponse { return responses(statusModel, cs) }
}

func responses(m model, cs []int) []common.StatusCodeResponse {
	out := make([]common.StatusCodeResponse, len(cs))
	for i, c := range cs {
		out[i] = response{code: c, message: http.StatusText(c), model: m}
	}
	return out
}
