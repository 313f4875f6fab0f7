package openapi

import (
	"k8s.io/kube-openapi/pkg/common"
)

// route is one operation, as kube-openapi's builders read it.
type route struct {
	method      string
	path        string // absolute: /api/v1/namespaces/{namespace}/configmaps
	operationID string
	tags        []string
	description string
	params      []common.Parameter
	consumes    []string
	produces    []string
	metadata    map[string]any // the x-kubernetes-* extensions of the operation
	body        any            // the model of the request body, or nil
	responses   []common.StatusCodeResponse
}

var _ common.Route = (*route)(nil)

func (r *route) Method() string                                   { return r.method }
func (r *route) Path() string                                     { return r.path }
func (r *route) OperationName() string                            { return r.operationID }
func (r *route) Parameters() []common.Parameter                   { return r.params }
func (r *route) Description() string                              { return r.description }
func (r *route) Consumes() []string                               { return r.consumes }
func (r *route) Produces() []string                               { return r.produces }
func (r *route) Metadata() map[string]any                         { return r.metadata }
func (r *route) RequestPayloadSample() any                        { return r.body }
func (r *route) ResponsePayloadSample() any                       { return nil }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse { return r.responses }

// operationIDAndTags tells the builders the id and tags each route was
// made with.
func operationIDAndTags(r common.Route) (string, []string, error) {
	rt := r.(*route)
	return rt.operationID, rt.tags, nil
}

// container is the routes under one root path, such as /api/v1.
type container struct {
	root   string
	routes []common.Route
}

var _ common.RouteContainer = (*container)(nil)

func (c *container) RootPath() string                   { return c.root }
func (c *container) PathParameters() []common.Parameter { return nil }
func (c *container) Routes() []common.Route             { return c.routes }

// param is a path, query or body parameter.
type param struct {
	name        string
	description string
	kind        common.ParameterKind
	dataType    string // a simple type: string, boolean, integer
	required    bool
}

var _ common.Parameter = param{}

func (p param) Name() string               { return p.name }
func (p param) Description() string        { return p.description }
func (p param) Required() bool             { return p.required }
func (p param) Kind() common.ParameterKind { return p.kind }
func (p param) DataType() string           { return p.dataType }
func (p param) AllowMultiple() bool        { return false }

// response is the model of one status code.
type response struct {
	code    int
	message string
	model   any
}

var _ common.StatusCodeResponse = response{}

func (r response) Code() int       { return r.code }
func (r response) Message() string { return r.message }
func (r response) Model() any      { return r.model }

// model stands for a type by its definition name, as builders name the
// models they are given.
type model string

// OpenAPIModelName is the definition name.
func (m model) OpenAPIModelName() string { return string(m) }
