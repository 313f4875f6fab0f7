package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/registry/rest"
)

// Delete serves DELETE of one object.
func (s *Scope) Delete(w http.ResponseWriter, r *http.Request, name string) {
	deleter, ok := s.Storage.(rest.GracefulDeleter)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	opts, err := s.deleteOptions(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, deleted, err := deleter.Delete(r.Context(), name, s.deleteValidation(name, opts), opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if !deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	// kube's success Status carries no code: the HTTP status says it.
	if status, ok := obj.(*metav1.Status); ok && status.Details != nil && status.Details.Name == "" {
		status.Details.Name = name
	}
	s.writeObject(w, r, code, obj)
}

// DeleteCollection serves DELETE of a collection.
func (s *Scope) DeleteCollection(w http.ResponseWriter, r *http.Request) {
	deleter, ok := s.Storage.(rest.CollectionDeleter)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	listOpts, err := s.listOptions(r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts, err := s.deleteOptions(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	validate := s.deleteValidation("", opts)
	if rd, ok := deleter.(rest.ResponseCollectionDeleter); ok {
		// The listed objects are written one by one, as a list's are.
		list, items, err := rd.DeleteCollectionForResponse(r.Context(), validate, opts, listOpts)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeList(w, r, list, items)
		return
	}
	out, err := deleter.DeleteCollection(r.Context(), validate, opts, listOpts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusOK, out)
}

// deleteOptions reads DeleteOptions from the body, or else from the query.
func (s *Scope) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		info, err := negotiateInput(r, s.Serializer)
		if err != nil {
			return nil, err
		}
		obj, got, err := info.Serializer.Decode(body, &gvk, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != opts {
			return nil, apierrors.NewBadRequest("the body of a delete must be DeleteOptions")
		}
		audit.LogRequestObject(r.Context(), opts, got.GroupVersion(), s.Serializer)
	} else if err := s.decodeOptions(r, opts); err != nil {
		return nil, err
	}
	if err := validateDeleteOptions(opts); err != nil {
		return nil, err
	}
	return opts, nil
}
