package handlers

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/registry/rest"
)

// patchTypes are the patch media types served, in kube's order.
var patchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType}

// Patch serves PATCH of one object. The patch is applied to the current
// object inside the storage's update loop, so it never overwrites a
// concurrent write.
func (s *Scope) Patch(w http.ResponseWriter, r *http.Request, name string) {
	updater, ok := s.Storage.(rest.Updater)
	if !ok {
		s.writeError(w, r, MethodNotSupported(s.GroupResource(), "patch"))
		return
	}
	pt, err := s.patchType(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts := &metav1.PatchOptions{}
	if err := s.decodeOptions(r, opts); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := validateDryRun(opts.DryRun); err != nil {
		s.writeError(w, r, err)
		return
	}
	patch, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun := len(opts.DryRun) > 0
	info := rest.UpdatedObjectFunc(func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		if old == nil {
			return nil, apierrors.NewNotFound(s.GroupResource(), name)
		}
		obj, err := s.applyPatch(w, r, pt, patch, old)
		if err != nil {
			return nil, err
		}
		if err := checkName(ctx, obj, name, s.Namespaced); err != nil {
			return nil, err
		}
		return obj, s.mutate(ctx, admission.Update, name, obj, old, dryRun)
	})
	updateOpts := &metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	out, _, err := updater.Update(r.Context(), name, info, s.createValidation(dryRun), s.updateValidation(dryRun), false, updateOpts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusOK, out)
}

func (s *Scope) patchType(r *http.Request) (types.PatchType, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	for _, pt := range patchTypes {
		if mt == string(pt) {
			return pt, nil
		}
	}
	names := make([]string, len(patchTypes))
	for i, pt := range patchTypes {
		names[i] = string(pt)
	}
	return "", NewStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(names, ", "))
}

// applyPatch applies patch to old's JSON and decodes the result as a body.
func (s *Scope) applyPatch(w http.ResponseWriter, r *http.Request, pt types.PatchType, patch []byte, old runtime.Object) (runtime.Object, error) {
	original, err := s.encodeJSON(old)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = ops.Apply(original); err != nil {
			return nil, NewStatusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, err.Error())
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(original, patch); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		if patched, err = strategicpatch.StrategicMergePatch(original, patch, s.Storage.New()); err != nil {
			return nil, strategicPatchError(err)
		}
	}
	// The patched document is decoded as a JSON body, whatever the
	// request's Content-Type was.
	jr := r.Clone(r.Context())
	jr.Header.Set("Content-Type", runtime.ContentTypeJSON)
	return s.decodeBody(w, jr, patched)
}

func strategicPatchError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return NewStatusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, err.Error())
	}
	return apierrors.NewBadRequest(err.Error())
}

// encodeJSON is obj as JSON at the endpoint's version.
func (s *Scope) encodeJSON(obj runtime.Object) ([]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(s.Serializer.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, errors.New("no JSON serializer")
	}
	var buf bytes.Buffer
	err := s.Serializer.EncoderForVersion(info.Serializer, s.Kind.GroupVersion()).Encode(obj, &buf)
	return buf.Bytes(), err
}
