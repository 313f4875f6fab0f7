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
		s.writeError(w, r, MethodNotSupported(s.GroupResource(), "list"))
		return
	}
	list, err := lister.List(r.Context(), opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusOK, list)
}

// listOptions parses and validates the query of a list or watch.
func (s *Scope) listOptions(r *http.Request, watch bool) (*rest.ListOptions, error) {
	in := &metav1.ListOptions{}
	if err := s.decodeOptions(r, in); err != nil {
		return nil, err
	}
	if errs := validateListOptions(in, watch); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	opts := &rest.ListOptions{
		ResourceVersion: in.ResourceVersion, ResourceVersionMatch: in.ResourceVersionMatch,
		Limit: in.Limit, Continue: in.Continue, AllowWatchBookmarks: in.AllowWatchBookmarks,
		SendInitialEvents: in.SendInitialEvents, TimeoutSeconds: in.TimeoutSeconds,
	}
	var err error
	if opts.LabelSelector, err = labels.Parse(in.LabelSelector); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if opts.FieldSelector, err = s.fieldSelector(in.FieldSelector); err != nil {
		return nil, err
	}
	return opts, nil
}

// fieldSelector parses a field selector and refuses fields the resource
// does not support, with kube's message: resources with fields of their own
// name the field, the others list the two metadata fields.
func (s *Scope) fieldSelector(text string) (fields.Selector, error) {
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

// validateListOptions applies kube's rules for combining resourceVersion,
// resourceVersionMatch, continue and the WatchList options.
func validateListOptions(o *metav1.ListOptions, watch bool) field.ErrorList {
	var errs field.ErrorList
	rvm := o.ResourceVersionMatch
	switch {
	case rvm == "":
	case o.ResourceVersion == "" && !(watch && isTrue(o.SendInitialEvents)):
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided"))
	case rvm == metav1.ResourceVersionMatchExact && o.ResourceVersion == "0":
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
	case rvm != metav1.ResourceVersionMatchExact && rvm != metav1.ResourceVersionMatchNotOlderThan:
		errs = append(errs, field.NotSupported(field.NewPath("resourceVersionMatch"), rvm,
			[]string{string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	if len(o.Continue) > 0 && !watch {
		if len(o.ResourceVersion) > 0 && o.ResourceVersion != "0" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersion"), "specifying resource version is not allowed when using continue"))
		}
		if rvm != "" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	return append(errs, validateWatchListOptions(o, watch)...)
}

func validateWatchListOptions(o *metav1.ListOptions, watch bool) field.ErrorList {
	var errs field.ErrorList
	if o.SendInitialEvents == nil {
		if watch && o.ResourceVersionMatch != "" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		return errs
	}
	if !watch {
		return append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), fmt.Sprintf("sendInitialEvents requires setting resourceVersionMatch to %s", metav1.ResourceVersionMatchNotOlderThan)))
	}
	if *o.SendInitialEvents && !o.AllowWatchBookmarks {
		errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"), "sendInitialEvents requires setting allowWatchBookmarks to true"))
	}
	return errs
}

func isTrue(b *bool) bool { return b != nil && *b }
