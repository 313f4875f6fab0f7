package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/internal/safejsonpatch"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/warning"
)

// patchTypes are the patch media types served, in kube's order; apply is
// served where the scope has a field manager.
var patchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}

// Patch serves PATCH of one object. The patch is applied to the current
// object inside the storage's update loop, so it never overwrites a
// concurrent write.
func (s *Scope) Patch(w http.ResponseWriter, r *http.Request, name string) {
	updater, ok := s.Storage.(rest.Patcher)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
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
	if err := validatePatchOptions(opts, pt); err != nil {
		s.writeError(w, r, err)
		return
	}
	patch, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := checkPatchSyntax(r, pt, patch); err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogRequestPatch(r.Context(), patch)
	dryRun := len(opts.DryRun) > 0
	apply := pt == types.ApplyYAMLPatchType
	manager := managerName(opts.FieldManager, r)
	info := rest.UpdatedObjectFunc(func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		if old == nil && !apply {
			return nil, apierrors.NewNotFound(s.GroupResource(), name)
		}
		var obj runtime.Object
		var err error
		if apply {
			obj, err = s.applyServerSide(w, r, patch, old, manager, opts.Force != nil && *opts.Force)
		} else if obj, err = s.applyPatch(w, r, pt, patch, old); err == nil {
			obj = s.trackUpdate(old, obj, manager)
		}
		if err != nil {
			return nil, err
		}
		if err := checkName(ctx, obj, name, s.Namespaced); err != nil {
			return nil, err
		}
		op := admission.Update
		if old == nil {
			op = admission.Create
		}
		return obj, s.mutate(ctx, op, name, obj, old, dryRun)
	})
	updateOpts := &metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	out, created, err := updater.Update(r.Context(), name, info, s.createValidation(dryRun), s.updateValidation(dryRun), apply, updateOpts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeObject(w, r, code, out)
}

// RoutesPatchType reports whether kube's router has a route for the patch
// media type of r: a built-in resource's other media types are refused by
// the router, before any handler; a custom resource's by its handler.
func (s *Scope) RoutesPatchType(r *http.Request) bool {
	if s.PatchTypes != nil {
		return true
	}
	_, err := s.patchType(r)
	return err == nil
}

func (s *Scope) patchType(r *http.Request) (types.PatchType, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if s.PatchTypes != nil {
		names := make([]string, len(s.PatchTypes))
		for i, pt := range s.PatchTypes {
			if mt == string(pt) && (pt != types.ApplyYAMLPatchType || s.FieldManager != nil) {
				return pt, nil
			}
			names[i] = string(pt)
		}
		return "", NewStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: "+strings.Join(names, ", "))
	}
	for _, pt := range patchTypes {
		if pt == types.ApplyYAMLPatchType && s.FieldManager == nil {
			continue
		}
		if mt == string(pt) {
			return pt, nil
		}
	}
	// kube has no route for other media types: its answer is the router's.
	return "", NewStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
}

// maxJSONPatchOperations bounds the work one JSON patch may ask for, as
// kube does.
const maxJSONPatchOperations = 10000

// jsonPatchMaxCopyBytes bounds what the copy operations of one JSON patch
// may add to the document, kube's 3 MiB: without it, a patch that copies a
// value into itself doubles the object with each operation
// (CVE-2019-1002100). The library offers only a process-wide limit, which
// kube sets once too.
const jsonPatchMaxCopyBytes = 3 << 20

func init() { jsonpatch.AccumulatedCopySizeLimit = jsonPatchMaxCopyBytes }

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
		if len(ops) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		if patched, err = safejsonpatch.Apply(ops, original); err != nil {
			// Also a patch the library panics on, where kube drops the
			// connection.
			// kube's answer keeps the cause to itself.
			return nil, NewStatusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "the server rejected our request due to an error in our request")
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
	// request's Content-Type was. As in kube, a patch whose result does not
	// decode, or has fields strict validation refuses, is invalid.
	jr := r.Clone(r.Context())
	jr.Header.Set("Content-Type", runtime.ContentTypeJSON)
	obj, err := s.decodeBody(w, jr, patched)
	var bad *bodyError
	if errors.As(err, &bad) {
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), string(patched), bad.cause.Error())})
	}
	return obj, err
}

// applyServerSide merges an apply configuration into old (nil when the
// object does not exist yet) with the field manager's ownership rules.
func (s *Scope) applyServerSide(w http.ResponseWriter, r *http.Request, patch []byte, old runtime.Object, manager string, force bool) (runtime.Object, error) {
	// Numbers are decoded as unstructured bodies are (integers as int64),
	// so that a custom resource's integer fields stay integers.
	patchObj := &unstructured.Unstructured{Object: map[string]interface{}{}}
	patchJSON, err := yaml.YAMLToJSON(patch)
	if err == nil {
		err = utiljson.Unmarshal(patchJSON, &patchObj.Object)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
	}
	validation, err := fieldValidationOf(r)
	if err != nil {
		return nil, err
	}
	// Strict apply keeps the unknown fields: the typed conversion of the
	// apply configuration refuses them, with kube's ".field: field not
	// declared in schema".
	if validation != validationStrict {
		if err := s.prune(r.Context(), validation, patchObj.GroupVersionKind(), patchObj); err != nil {
			return nil, err
		}
	}
	live := old
	if live == nil {
		live = s.Storage.New()
	}
	obj, err := s.FieldManager.Apply(live, patchObj, manager, force)
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			err = apierrors.NewBadRequest(err.Error())
		}
		return nil, err
	}
	if validation != validationIgnore {
		if err := yaml.UnmarshalStrict(patch, &map[string]interface{}{}); err != nil {
			if validation == validationStrict {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
			}
			warning.Add(r.Context(), err.Error())
		}
	}
	s.defaults(obj)
	return obj, nil
}

func strategicPatchError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return NewStatusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, err.Error())
	case errors.Is(err, mergepatch.ErrBadJSONDoc), errors.Is(err, mergepatch.ErrBadPatchFormatForPrimitiveList),
		errors.Is(err, mergepatch.ErrBadPatchFormatForRetainKeys), errors.Is(err, mergepatch.ErrBadPatchFormatForSetElementOrderList),
		errors.Is(err, mergepatch.ErrUnsupportedStrategicMergePatchFormat):
		return apierrors.NewBadRequest(err.Error())
	}
	// kube answers other merge failures with a 500; they are the
	// client's patch, so capstan answers 400 (docs/compatibility.md).
	return apierrors.NewBadRequest(err.Error())
}

// jsonPatchOp is one operation of a JSON patch, as kube first decodes a
// patch to check it (its name shows in kube's decoding errors).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// checkPatchSyntax refuses, as kube does before applying anything, a JSON,
// merge or strategic patch that is not JSON, and (unless fieldValidation
// is Ignore) a JSON patch that is not a list of operations or a merge
// patch that is not an object.
func checkPatchSyntax(r *http.Request, pt types.PatchType, patch []byte) error {
	if pt == types.ApplyYAMLPatchType {
		return nil
	}
	if !json.Valid(patch) {
		return apierrors.NewBadRequest("invalid JSON patch")
	}
	if v, err := fieldValidationOf(r); err != nil || v == validationIgnore {
		return err
	}
	var err error
	switch pt {
	case types.JSONPatchType:
		var ops []jsonPatchOp
		err = json.Unmarshal(patch, &ops)
	case types.MergePatchType:
		var obj map[string]any
		err = json.Unmarshal(patch, &obj)
	}
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	return nil
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
