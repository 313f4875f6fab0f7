package handlers

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/registry/rest"
)

// Create serves POST to a collection.
func (s *Scope) Create(w http.ResponseWriter, r *http.Request) {
	creater, ok := s.Storage.(rest.Creater)
	if !ok {
		s.writeError(w, r, MethodNotSupported(s.GroupResource(), "create"))
		return
	}
	opts := &metav1.CreateOptions{}
	if err := s.decodeOptions(r, opts); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := validateDryRun(opts.DryRun); err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.decodeBody(w, r, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx := r.Context()
	dryRun := len(opts.DryRun) > 0
	if err := s.mutate(ctx, admission.Create, "", obj, nil, dryRun); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := creater.Create(ctx, obj, s.createValidation(dryRun), opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusCreated, out)
}

var dryRunValues = sets.New(metav1.DryRunAll)

// validateDryRun accepts the one dryRun value kube knows.
func validateDryRun(dryRun []string) error {
	for _, v := range dryRun {
		if !dryRunValues.Has(v) {
			return apierrors.NewBadRequest(fmt.Sprintf("Invalid dry run value: %q; supported values: %q", v, sets.List(dryRunValues)))
		}
	}
	return nil
}
