// Package conversion converts custom resources between the versions of their
// CustomResourceDefinition, by the CRD's spec.conversion.strategy: None only
// rewrites apiVersion, Webhook sends the objects to the CRD's conversion
// webhook in a ConversionReview and checks what comes back.
//
// Errors are kube-apiserver's messages and are *Error values, which API
// handlers answer with a 500 Status carrying the message, as kube does.
package conversion

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Converter converts the custom resources of one CRD. It is safe for
// concurrent use.
type Converter interface {
	// Convert returns in, an *unstructured.Unstructured or an
	// *unstructured.UnstructuredList of the CRD's resources, at version to.
	// in is not modified and the result shares no memory with it.
	Convert(ctx context.Context, in runtime.Object, to schema.GroupVersion) (runtime.Object, error)
}

// DefaultTimeout bounds one webhook call when Options.Timeout is zero: the
// timeout kube-apiserver gives its webhook clients.
const DefaultTimeout = 30 * time.Second

// Options are the settings of the webhook client. The zero value is usable.
type Options struct {
	// ServiceResolver finds the address to connect to for a webhook given
	// as a Service. Nil means DefaultServiceResolver.
	ServiceResolver ServiceResolver

	// DialContext opens the connections to webhooks. Nil means a
	// net.Dialer with kube's 30s connect timeout and keep-alive, and proxies
	// from the environment (HTTPS_PROXY, NO_PROXY); with a DialContext no
	// proxy is used.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	// Timeout bounds one webhook call, and is sent to the webhook as the
	// timeout query parameter. Zero means DefaultTimeout.
	Timeout time.Duration

	// MaxResponseBytes bounds the size of a webhook's answer. Zero means no
	// bound, as in kube.
	MaxResponseBytes int64

	// Clients shares webhook clients, and their connections, among the
	// converters built with it: the converter of a changed CRD keeps the
	// client of the one it replaces when the webhook's clientConfig is the
	// same. Nil means every converter builds its own client. One cache must
	// only be used with one ServiceResolver and DialContext.
	Clients *ClientCache
}

// Error is a failed conversion. Its message is kube-apiserver's. As an
// apierrors.APIStatus it is a 500 Failure Status with that message and no
// reason: what kube-apiserver answers when a conversion fails.
type Error struct {
	err error
}

func (e *Error) Error() string { return e.err.Error() }

// Unwrap is the cause, such as the *url.Error of a failed webhook call.
func (e *Error) Unwrap() error { return e.err }

// Status is the Status a client is given for the failed conversion.
func (e *Error) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonUnknown,
		Message: e.err.Error(),
	}
}

func errorf(format string, args ...any) error {
	return &Error{err: fmt.Errorf(format, args...)}
}

// strategy converts in place an object that is a private copy of the
// caller's, already checked to be of a known version.
type strategy interface {
	convert(ctx context.Context, in runtime.Object, to schema.GroupVersion) (runtime.Object, error)
}

// converter checks versions and copies its input for a strategy, and knows
// what the ObjectConvertor adaptor needs of the CRD.
type converter struct {
	group         string
	versions      sets.Set[string]
	clusterScoped bool
	hasScale      bool
	// selectable are the field paths of each version's selectableFields,
	// without their leading dot.
	selectable map[string]sets.Set[string]
	strategy   strategy
}

// New builds the converter of crd by its spec.conversion.strategy; a CRD
// without spec.conversion converts as None. A Webhook converter's HTTPS
// client is built here (or taken from opts.Clients), so the converter is to
// be rebuilt when the CRD changes.
func New(crd *apiextv1.CustomResourceDefinition, opts Options) (Converter, error) {
	c := &converter{
		group:         crd.Spec.Group,
		versions:      sets.New[string](),
		clusterScoped: crd.Spec.Scope == apiextv1.ClusterScoped,
		selectable:    map[string]sets.Set[string]{},
	}
	for _, v := range crd.Spec.Versions {
		c.versions.Insert(v.Name)
		if v.Subresources != nil && v.Subresources.Scale != nil {
			c.hasScale = true
		}
		paths := sets.New[string]()
		for _, f := range v.SelectableFields {
			paths.Insert(strings.TrimPrefix(f.JSONPath, "."))
		}
		c.selectable[v.Name] = paths
	}

	strategyType := apiextv1.NoneConverter
	if crd.Spec.Conversion != nil {
		strategyType = crd.Spec.Conversion.Strategy
	}
	switch strategyType {
	case apiextv1.NoneConverter:
		c.strategy = noneStrategy{}
	case apiextv1.WebhookConverter:
		w, err := newWebhookStrategy(crd, opts)
		if err != nil {
			return nil, err
		}
		c.strategy = w
	default:
		return nil, fmt.Errorf("unknown conversion strategy %q for CRD %s", strategyType, crd.Name)
	}
	return c, nil
}

func (c *converter) knows(gv schema.GroupVersion) bool {
	return gv.Group == c.group && c.versions.Has(gv.Version)
}

// Convert implements Converter.
func (c *converter) Convert(ctx context.Context, in runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	switch in.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
	default:
		return nil, errorf("input type %T is not valid for custom resource conversion", in)
	}
	if !c.knows(to) {
		return nil, errorf("request to convert CR to an invalid group/version: %s", to.String())
	}
	from := in.GetObjectKind().GroupVersionKind().GroupVersion()
	if !c.knows(from) {
		return nil, errorf("request to convert CR from an invalid group/version: %s", from.String())
	}
	if list, ok := in.(*unstructured.UnstructuredList); ok {
		for i := range list.Items {
			gv := list.Items[i].GroupVersionKind().GroupVersion()
			if !c.knows(gv) {
				return nil, errorf("request to convert CR list failed, list index %d has invalid group/version: %s", i, gv.String())
			}
		}
	}
	out, err := c.strategy.convert(ctx, in.DeepCopyObject(), to)
	if err != nil {
		if _, ok := err.(*Error); !ok {
			err = &Error{err: err}
		}
		return nil, err
	}
	return out, nil
}

// fieldLabelSupported says whether label can select the resources of
// version gv: metadata.name, metadata.namespace of namespaced resources, and
// the version's selectableFields.
func (c *converter) fieldLabelSupported(gv schema.GroupVersion, label string) bool {
	switch {
	case label == "metadata.name":
		return true
	case label == "metadata.namespace" && !c.clusterScoped:
		return true
	}
	return gv.Group == c.group && c.selectable[gv.Version].Has(label)
}

func (c *converter) convertsScale() bool { return c.hasScale }

// noneStrategy only changes apiVersion, of a list's items too.
type noneStrategy struct{}

func (noneStrategy) convert(_ context.Context, in runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	return setAPIVersion(in, to), nil
}

// setAPIVersion sets the apiVersion of in, and of its items when it is a
// list, to to.
func setAPIVersion(in runtime.Object, to schema.GroupVersion) runtime.Object {
	apiVersion := to.String()
	switch in := in.(type) {
	case *unstructured.UnstructuredList:
		for i := range in.Items {
			in.Items[i].SetAPIVersion(apiVersion)
		}
		in.SetAPIVersion(apiVersion)
	case *unstructured.Unstructured:
		in.SetAPIVersion(apiVersion)
	}
	return in
}
