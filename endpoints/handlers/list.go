package handlers

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// List serves GET of a collection, and watches when ?watch is set.
func (s *Scope) List(w http.ResponseWriter, r *http.Request, watch bool) {
	opts, err := s.listOptions(r, watch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if watch {
		s.serveWatch(w, r, opts)
		return
	}
	lister, ok := s.Storage.(rest.Lister)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	// The list is only encoded (or turned into a Table or metadata, which
	// copy what they keep): its items may share the watch cache's objects.
	opts.Objects = storage.CachedObjects
	list, items, err := s.listForResponse(r.Context(), lister, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeList(w, r, list, items)
}

// listOptions parses and validates the query of a list or watch.
func (s *Scope) listOptions(r *http.Request, watch bool) (*rest.ListOptions, error) {
	in := &metav1.ListOptions{}
	if err := s.decodeOptions(r, in); err != nil {
		return nil, err
	}
	// As kube's, the options are defaulted and validated as a watch's only
	// for ?watch=true, not on the legacy /watch/ paths.
	defaultWatchOptions(in)
	if errs := validateListOptions(in, in.Watch); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if err := continueWithResourceVersion(in, watch); err != nil {
		return nil, err
	}
	opts := &rest.ListOptions{
		ResourceVersion: in.ResourceVersion, ResourceVersionMatch: in.ResourceVersionMatch,
		Limit: in.Limit, Continue: in.Continue, AllowWatchBookmarks: in.AllowWatchBookmarks,
		SendInitialEvents: in.SendInitialEvents, TimeoutSeconds: in.TimeoutSeconds,
	}
	var err error
	if opts.LabelSelector, err = labelSelector(in.LabelSelector); err != nil {
		return nil, err
	}
	if opts.FieldSelector, err = s.fieldSelector(in.FieldSelector); err != nil {
		return nil, err
	}
	return opts, nil
}

// labelSelector parses a label selector. Nearly every list and watch has
// none, and the parser costs a lexer and a sort even then.
func labelSelector(text string) (labels.Selector, error) {
	if text == "" {
		return labels.Everything(), nil
	}
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return sel, nil
}

// fieldSelector parses a field selector and refuses fields the resource
// does not support, with kube's message: resources with fields of their own
// name the field, the others list the two metadata fields.
func (s *Scope) fieldSelector(text string) (fields.Selector, error) {
	if text == "" {
		// Nearly every list and watch: the parser would sort an empty
		// slice through an interface, a few percent of a list's CPU.
		return fields.Everything(), nil
	}
	sel, err := fields.ParseSelector(text)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	for _, req := range sel.Requirements() {
		if _, ok := s.SupportedFields[req.Field]; ok {
			continue
		}
		if onlyMetadataFields(s.SupportedFields) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q",
				req.Field, "metadata.name", "metadata.namespace"))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
	}
	return sel, nil
}

func onlyMetadataFields(supported fields.Set) bool {
	for f := range supported {
		if f != "metadata.name" && f != "metadata.namespace" {
			return false
		}
	}
	return true
}

// defaultWatchOptions gives a watch from "" or "0" that names neither
// sendInitialEvents nor resourceVersionMatch kube's defaults (the WatchList
// gate, on in v1.37): its initial events, NotOlderThan. A continue token is
// then refused with the resourceVersionMatch it implies, as kube refuses it.
func defaultWatchOptions(o *metav1.ListOptions) {
	if !o.Watch || o.SendInitialEvents != nil || o.ResourceVersionMatch != "" || (o.ResourceVersion != "" && o.ResourceVersion != "0") {
		return
	}
	initial := true
	o.SendInitialEvents, o.ResourceVersionMatch = &initial, metav1.ResourceVersionMatchNotOlderThan
}

// validateListOptions applies kube's rules for combining resourceVersion,
// resourceVersionMatch, continue and sendInitialEvents. A resourceVersion
// with a continue token is refused later, as a 400, once the token is known
// to be valid.
func validateListOptions(o *metav1.ListOptions, watch bool) field.ErrorList {
	if watch {
		return validateWatchOptions(o)
	}
	var errs field.ErrorList
	path := field.NewPath("resourceVersionMatch")
	if match := o.ResourceVersionMatch; match != "" {
		if o.ResourceVersion == "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if o.Continue != "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if match != metav1.ResourceVersionMatchExact && match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.NotSupported(path, match,
				[]string{string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
		}
		if match == metav1.ResourceVersionMatchExact && o.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
		}
	}
	if o.SendInitialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	return errs
}

// validateWatchOptions: a watch takes resourceVersionMatch only with
// sendInitialEvents, and then only NotOlderThan.
func validateWatchOptions(o *metav1.ListOptions) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("resourceVersionMatch")
	match := o.ResourceVersionMatch
	if o.SendInitialEvents != nil && match != metav1.ResourceVersionMatchNotOlderThan {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("sendInitialEvents requires setting resourceVersionMatch to %s", metav1.ResourceVersionMatchNotOlderThan)))
	}
	if match != "" {
		if o.SendInitialEvents == nil {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.NotSupported(path, match, []string{string(metav1.ResourceVersionMatchNotOlderThan)}))
		}
		if o.Continue != "" {
			errs = append(errs, field.Forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	return errs
}

// continueWithResourceVersion refuses a list that names both a continue
// token and a resourceVersion: the token carries its own.
func continueWithResourceVersion(o *metav1.ListOptions, watch bool) error {
	if watch || o.Continue == "" || o.ResourceVersion == "" || o.ResourceVersion == "0" {
		return nil
	}
	return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
}
