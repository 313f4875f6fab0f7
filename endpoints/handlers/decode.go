package handlers

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

// readBody reads a request body up to the scope's limit: 413 past it.
func (s *Scope) readBody(r *http.Request) ([]byte, error) {
	limit := s.MaxRequestBodyBytes
	if limit <= 0 {
		limit = 3 * 1024 * 1024
	}
	if r.ContentLength > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to read the request body: %v", err))
	}
	if int64(len(data)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	if info, ok := request.InfoFrom(r.Context()); ok {
		metrics.RequestBody(s.Resource.Group, s.Resource.Resource, info.Verb, len(data))
	}
	return data, nil
}

// fieldValidation is the fieldValidation query parameter: how unknown and
// duplicate fields in a body are treated.
type fieldValidation string

const (
	validationIgnore fieldValidation = "Ignore"
	validationWarn   fieldValidation = "Warn"
	validationStrict fieldValidation = "Strict"
)

func fieldValidationOf(r *http.Request) (fieldValidation, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "":
		return validationWarn, nil
	case string(validationIgnore), string(validationWarn), string(validationStrict):
		return fieldValidation(v), nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("fieldValidation parameter unsupported: %v", v))
	}
}

// decodeBody decodes a request body into a new object of the scope's kind.
// It refuses a body of another group, version or kind, and reports unknown or
// duplicate fields as fieldValidation asks: warnings for Warn, 400 for Strict.
func (s *Scope) decodeBody(w http.ResponseWriter, r *http.Request, body []byte) (runtime.Object, error) {
	info, err := negotiateInput(r, s.Serializer)
	if err != nil {
		return nil, err
	}
	validation, err := fieldValidationOf(r)
	if err != nil {
		return nil, err
	}
	decoder := info.Serializer
	if validation != validationIgnore && info.StrictSerializer != nil {
		decoder = info.StrictSerializer
	}
	into := s.Storage.New()
	obj, gvk, err := decoder.Decode(body, &s.Kind, into)
	if err != nil && runtime.IsStrictDecodingError(err) && obj != nil {
		if err := s.strictErrors(r.Context(), validation, *gvk, err); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, s.decodeError(err, gvk, body)
	}
	// The endpoint's kind in another group version is refused for its
	// version, as kube does once it has converted it; another kind does
	// not convert.
	if gvk.Kind == s.Kind.Kind {
		if err := s.checkKind(*gvk); err != nil {
			return nil, err
		}
	}
	if gvk.Kind != s.Kind.Kind || obj != into {
		return nil, s.decodeError(wrongKindError(obj, *gvk, s.Kind.GroupKind()), gvk, body)
	}
	if err := s.prune(r.Context(), validation, *gvk, obj); err != nil {
		return nil, err
	}
	s.defaults(obj)
	return obj, nil
}

// prune drops the fields the scope's schema does not know, reporting them
// as fieldValidation asks, as a strict decoder would.
func (s *Scope) prune(ctx context.Context, validation fieldValidation, gvk schema.GroupVersionKind, obj runtime.Object) error {
	if s.Pruner == nil {
		return nil
	}
	paths, err := s.Pruner(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if len(paths) == 0 || validation == validationIgnore {
		return nil
	}
	errs := make([]error, len(paths))
	for i, p := range paths {
		errs[i] = fmt.Errorf("unknown field %q", p)
	}
	return s.strictErrors(ctx, validation, gvk, runtime.NewStrictDecodingError(errs))
}

// decodeError is kube's 400 for a body that cannot be decoded as the
// endpoint's kind: naming the body's kind when it has one, else showing the
// start of the body.
func (s *Scope) decodeError(err error, gvk *schema.GroupVersionKind, body []byte) error {
	if gvk != nil && gvk.Kind != "" {
		return &bodyError{apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, s.Kind.Kind, err)), err}
	}
	return &bodyError{apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", s.Kind.Kind, err, summarize(body, 30))), err}
}

// bodyError is the answer to a body that does not decode, and the
// decoder's error: a patch reports that one on its own terms.
type bodyError struct {
	*apierrors.StatusError
	cause error
}

// typeName is a Go type's package-qualified name, without the pointer.
func typeName(obj runtime.Object) string {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.String()
}

// separateSchemes are the groups kube serves from servers with schemes of
// their own (the CRD server, the aggregator), which know no other kinds.
var separateSchemes = map[string]bool{"apiextensions.k8s.io": true, "apiregistration.k8s.io": true}

// wrongKindError is the cause kube gives for a body of another kind: its
// scheme cannot convert it to the endpoint's internal type, or, in a
// server with a scheme of its own, does not know it.
func wrongKindError(obj runtime.Object, gvk schema.GroupVersionKind, want schema.GroupKind) error {
	if separateSchemes[want.Group] {
		return fmt.Errorf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", gvk.Kind, gvk.GroupVersion())
	}
	return fmt.Errorf("converting (%s) to (%s): unknown conversion", typeName(obj), internalTypeName(want))
}

// internalTypeName is how kube names a built-in kind's internal type, which
// its conversion errors show: the package is the group's first label
// (core for the legacy group and for events.k8s.io, stored as core events).
func internalTypeName(gk schema.GroupKind) string {
	pkg, _, _ := strings.Cut(gk.Group, ".")
	if pkg == "" || gk.Group == "events.k8s.io" {
		pkg = "core"
	}
	return pkg + "." + gk.Kind
}

// summarize shows at most max bytes of a body: as text if it looks like
// JSON, in hex otherwise.
func summarize(data []byte, max int) string {
	suffix := ""
	if len(data) > max {
		data, suffix = data[:max], " ..."
	}
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		return string(data) + suffix
	}
	return hex.EncodeToString(data) + suffix
}

func (s *Scope) strictErrors(ctx context.Context, validation fieldValidation, gvk schema.GroupVersionKind, err error) error {
	if validation == validationStrict {
		return s.decodeError(err, &gvk, nil)
	}
	if strict, ok := runtime.AsStrictDecodingError(err); ok && validation == validationWarn {
		for _, e := range strict.Errors() {
			warning.Add(ctx, e.Error())
		}
	}
	return nil
}

// checkKind refuses a body whose apiVersion or kind is not the endpoint's.
func (s *Scope) checkKind(gvk schema.GroupVersionKind) error {
	if gvk.GroupVersion() != s.Kind.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)",
			gvk.GroupVersion().String(), s.Kind.GroupVersion().String()))
	}
	if gvk.Kind != s.Kind.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the kind in the data does not match the expected kind",
			gvk.Kind, gvk.Version, s.Kind.Kind))
	}
	return nil
}

// decodeOptions decodes query parameters into an options struct such as
// metav1.CreateOptions.
func (s *Scope) decodeOptions(r *http.Request, into runtime.Object) error {
	if err := s.ParameterCodec.DecodeParameters(r.URL.Query(), optionsVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// optionsVersion is where the option types (ListOptions, GetOptions...)
// are registered for decoding query parameters.
var optionsVersion = schema.GroupVersion{Version: "v1"}

// decodeWrite reads what a create or update sends: its options from the
// query (checked by validate) and its object from the body.
func (s *Scope) decodeWrite(w http.ResponseWriter, r *http.Request, opts runtime.Object, validate func() error) (runtime.Object, error) {
	if err := s.decodeOptions(r, opts); err != nil {
		return nil, err
	}
	if err := validate(); err != nil {
		return nil, err
	}
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	obj, err := s.decodeBody(w, r, body)
	if err != nil {
		return nil, err
	}
	audit.LogRequestObject(r.Context(), obj, s.Kind.GroupVersion(), s.Serializer)
	return obj, nil
}
