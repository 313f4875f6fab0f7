// Package expr compiles the CEL expressions of admission: webhook match
// conditions and the expressions of admission policies. It builds the
// environments kube declares for them (object, oldObject, request,
// namespaceObject, params, authorizer, variables) on kube's base CEL
// environment, and compiles an expression once, checking its type.
package expr

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"

	capcel "github.com/capstan-io/capstan/apiextensions/cel"
)

// The variable names of admission expressions, kube's.
const (
	ObjectVar          = "object"
	OldObjectVar       = "oldObject"
	ParamsVar          = "params"
	RequestVar         = "request"
	NamespaceVar       = "namespaceObject"
	AuthorizerVar      = "authorizer"
	RequestResourceVar = "authorizer.requestResource"
	VariablesVar       = "variables"
)

// Decls says which optional variables an expression may use.
type Decls struct {
	Params     bool // the policy has a paramKind
	Authorizer bool // authorizer and authorizer.requestResource
	PatchTypes bool // the Object{...} and JSONPatch types of mutations
}

// envs are the base environments of every combination of Decls, built
// once: building one costs milliseconds.
var (
	envsOnce sync.Once
	envs     map[Decls]*environment.EnvSet
	envsErr  error
)

func baseEnv(d Decls) (*environment.EnvSet, error) {
	envsOnce.Do(func() {
		envs = map[Decls]*environment.EnvSet{}
		for _, params := range []bool{false, true} {
			for _, authz := range []bool{false, true} {
				for _, patch := range []bool{false, true} {
					d := Decls{Params: params, Authorizer: authz, PatchTypes: patch}
					env, err := extend(capcel.BaseEnvSet(), d, nil, nil)
					if err != nil {
						envsErr = err
						return
					}
					envs[d] = env
				}
			}
		}
	})
	return envs[d], envsErr
}

// noVariables are the environments of expressions of objects that have
// no variables (most policies), with variables declared and empty: one
// per Decls, shared, as an environment of its own costs each object
// about a hundred kilobytes.
var noVariables = struct {
	sync.Mutex // guards envs
	envs       map[Decls]*environment.EnvSet
	variables  *apiservercel.DeclType
}{envs: map[Decls]*environment.EnvSet{},
	variables: apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{})}

func noVariablesEnv(d Decls) (*environment.EnvSet, error) {
	noVariables.Lock()
	defer noVariables.Unlock()
	if set := noVariables.envs[d]; set != nil {
		return set, nil
	}
	set, err := extend(capcel.BaseEnvSet(), d, noVariables.variables, nil)
	if err != nil {
		return nil, err
	}
	noVariables.envs[d] = set
	return set, nil
}

// Typed are the types of object (and oldObject) and params when known,
// for type checking; nil types are dyn.
type Typed struct {
	Object, Params *apiservercel.DeclType
}

func (t *Typed) celTypes() (object, params *cel.Type, decls []*apiservercel.DeclType) {
	object, params = cel.DynType, cel.DynType
	if t == nil {
		return object, params, nil
	}
	if t.Object != nil {
		object, decls = t.Object.CelType(), append(decls, t.Object)
	}
	if t.Params != nil {
		params, decls = t.Params.CelType(), append(decls, t.Params)
	}
	return object, params, decls
}

// extend declares the variables d asks for on base, and variables when
// not nil; typed, when not nil, types object, oldObject and params.
func extend(base *environment.EnvSet, d Decls, variables *apiservercel.DeclType, typed *Typed) (*environment.EnvSet, error) {
	requestType, namespaceType := requestDeclType(), namespaceDeclType()
	objectType, paramsType, typedDecls := typed.celTypes()
	opts := []cel.EnvOption{
		cel.Variable(ObjectVar, objectType),
		cel.Variable(OldObjectVar, objectType),
		cel.Variable(NamespaceVar, namespaceType.CelType()),
		cel.Variable(RequestVar, requestType.CelType()),
	}
	types := append([]*apiservercel.DeclType{requestType, namespaceType}, typedDecls...)
	if d.Params {
		opts = append(opts, cel.Variable(ParamsVar, paramsType))
	}
	if d.Authorizer {
		opts = append(opts, cel.Variable(AuthorizerVar, library.AuthorizerType),
			cel.Variable(RequestResourceVar, library.ResourceCheckType))
	}
	if variables != nil {
		opts = append(opts, cel.Variable(VariablesVar, variables.CelType()))
		types = append(types, variables)
	}
	env, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         types,
	}, environment.StrictCostOpt)
	if err != nil {
		return nil, fmt.Errorf("admission CEL environment: %w", err)
	}
	if d.PatchTypes {
		env, err = env.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
				environment.UnversionedLib(library.JSONPatch),
			},
		})
		if err != nil {
			return nil, fmt.Errorf("admission CEL environment with patch types: %w", err)
		}
	}
	return env, nil
}

func declFields(fields ...*apiservercel.DeclField) map[string]*apiservercel.DeclField {
	m := make(map[string]*apiservercel.DeclField, len(fields))
	for _, f := range fields {
		m[f.Name] = f
	}
	return m
}

func declField(name string, t *apiservercel.DeclType, required bool) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, required, nil, nil)
}

// requestDeclType is the type of request, kube's kubernetes.AdmissionRequest.
func requestDeclType() *apiservercel.DeclType {
	str := apiservercel.StringType
	gvk := apiservercel.NewObjectType("kubernetes.GroupVersionKind", declFields(
		declField("group", str, true), declField("version", str, true), declField("kind", str, true)))
	gvr := apiservercel.NewObjectType("kubernetes.GroupVersionResource", declFields(
		declField("group", str, true), declField("version", str, true), declField("resource", str, true)))
	strings := apiservercel.NewListType(str, -1)
	user := apiservercel.NewObjectType("kubernetes.UserInfo", declFields(
		declField("username", str, false), declField("uid", str, false),
		declField("groups", strings, false),
		declField("extra", apiservercel.NewMapType(str, strings, -1), false)))
	return apiservercel.NewObjectType("kubernetes.AdmissionRequest", declFields(
		declField("kind", gvk, true), declField("resource", gvr, true),
		declField("subResource", str, false),
		declField("requestKind", gvk, true), declField("requestResource", gvr, true),
		declField("requestSubResource", str, false),
		declField("name", str, true), declField("namespace", str, false),
		declField("operation", str, true), declField("userInfo", user, true),
		declField("dryRun", apiservercel.BoolType, false),
		declField("options", apiservercel.DynType, false)))
}

// namespaceDeclType is the type of namespaceObject: the parts of a
// Namespace kube lets expressions see.
func namespaceDeclType() *apiservercel.DeclType {
	str, strings := apiservercel.StringType, apiservercel.NewListType(apiservercel.StringType, -1)
	strMap := apiservercel.NewMapType(str, str, -1)
	ts := apiservercel.TimestampType
	condition := apiservercel.NewObjectType("kubernetes.NamespaceCondition", declFields(
		declField("status", str, true), declField("type", str, true), declField("lastTransitionTime", ts, true),
		declField("message", str, true), declField("reason", str, true)))
	status := apiservercel.NewObjectType("kubernetes.NamespaceStatus", declFields(
		declField("conditions", apiservercel.NewListType(condition, -1), true), declField("phase", str, true)))
	metadata := apiservercel.NewObjectType("kubernetes.NamespaceMetadata", declFields(
		declField("name", str, true), declField("generateName", str, true), declField("namespace", str, true),
		declField("labels", strMap, true), declField("annotations", strMap, true), declField("UID", str, true),
		declField("creationTimestamp", ts, true), declField("deletionGracePeriodSeconds", apiservercel.IntType, true),
		declField("deletionTimestamp", ts, true), declField("generation", apiservercel.IntType, true),
		declField("resourceVersion", str, true), declField("finalizers", strings, true)))
	spec := apiservercel.NewObjectType("kubernetes.NamespaceSpec", declFields(declField("finalizers", strings, true)))
	return apiservercel.NewObjectType("kubernetes.Namespace", declFields(
		declField("metadata", metadata, true), declField("spec", spec, true), declField("status", status, true)))
}
