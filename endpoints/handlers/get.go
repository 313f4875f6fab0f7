package handlers

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/registry/rest"
)

// Get serves GET of one object.
func (s *Scope) Get(w http.ResponseWriter, r *http.Request, name string) {
	getter, ok := s.Storage.(rest.Getter)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	opts := &metav1.GetOptions{}
	if err := s.decodeOptions(r, opts); err != nil {
		s.writeError(w, r, err)
		return
	}
	get := getter.Get
	if rg, ok := s.Storage.(rest.ResponseGetter); ok {
		get = rg.GetForResponse
	}
	obj, err := get(r.Context(), name, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusOK, obj)
}
