package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
)

// request is what every webhook of one admission sees, encoded once.
type request struct {
	attrs     *admission.Attributes
	object    []byte // JSON with apiVersion and kind, nil without an object
	oldObject []byte
	options   []byte
	user      authenticationv1.UserInfo
	vars      map[string]any // the CEL activation, made when first needed
	authz     map[string]any // the authorizer variables of the activation
}

func newRequest(ctx context.Context, a *admission.Attributes, az authz.Authorizer) (*request, error) {
	u, _ := authn.UserFrom(ctx)
	r := &request{attrs: a, authz: expr.AuthorizerValues(az, u, a)}
	var err error
	if r.object, err = encodeObject(a.Object, a.Kind); err != nil {
		return nil, err
	}
	if r.oldObject, err = encodeObject(a.OldObject, a.Kind); err != nil {
		return nil, err
	}
	if r.options, err = encodeOptions(a); err != nil {
		return nil, err
	}
	if u != nil {
		r.user = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			r.user.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				r.user.Extra[k] = v
			}
		}
	}
	return r, nil
}

// encodeObject encodes obj as JSON with its apiVersion and kind, without
// setting them on obj: objects storage hands over may be shared.
func encodeObject(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return json.Marshal(u.Object)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return withTypeMeta(obj, gvk, data)
}

func withTypeMeta(obj runtime.Object, gvk schema.GroupVersionKind, data []byte) ([]byte, error) {
	if !obj.GetObjectKind().GroupVersionKind().Empty() || len(data) < 2 || data[0] != '{' {
		return data, nil
	}
	head, _ := json.Marshal(metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind})
	if bytes.Equal(data, []byte("{}")) {
		return head, nil
	}
	out := append(head[:len(head)-1:len(head)-1], ',')
	return append(out, data[1:]...), nil
}

// encodeOptions encodes the write's options, or kube's empty ones of its
// operation when the caller has none.
func encodeOptions(a *admission.Attributes) ([]byte, error) {
	opts := a.Options
	var dryRun []string
	if a.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	if opts == nil {
		switch a.Operation {
		case admission.Create:
			opts = &metav1.CreateOptions{DryRun: dryRun}
		case admission.Update:
			opts = &metav1.UpdateOptions{DryRun: dryRun}
		case admission.Delete:
			opts = &metav1.DeleteOptions{DryRun: dryRun}
		default:
			return nil, nil
		}
	}
	data, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	return withTypeMeta(opts, metav1.SchemeGroupVersion.WithKind(optionsKinds[a.Operation]), data)
}

var optionsKinds = map[admission.Operation]string{
	admission.Create: "CreateOptions", admission.Update: "UpdateOptions", admission.Delete: "DeleteOptions",
}

// review builds the AdmissionReview of one call, in the webhook's version.
func (r *request) review(version string) (uid types.UID, body []byte, err error) {
	a := r.attrs
	uid = uuid.NewUUID()
	dryRun := a.DryRun
	req := admissionv1.AdmissionRequest{
		UID: uid, Kind: metav1.GroupVersionKind(a.Kind), Resource: metav1.GroupVersionResource(a.Resource),
		SubResource: a.Subresource, Name: a.Name, Namespace: a.Namespace,
		Operation: admissionv1.Operation(a.Operation), UserInfo: r.user, DryRun: &dryRun,
		Object: runtime.RawExtension{Raw: r.object}, OldObject: runtime.RawExtension{Raw: r.oldObject},
		Options: runtime.RawExtension{Raw: r.options},
	}
	kind, resource := metav1.GroupVersionKind(a.RequestKind()), metav1.GroupVersionResource(a.RequestResource())
	req.RequestKind, req.RequestResource, req.RequestSubResource = &kind, &resource, a.Subresource
	// v1beta1's request is v1's on the wire.
	review := struct {
		metav1.TypeMeta `json:",inline"`
		Request         *admissionv1.AdmissionRequest `json:"request"`
	}{metav1.TypeMeta{APIVersion: "admission.k8s.io/" + version, Kind: "AdmissionReview"}, &req}
	body, err = json.Marshal(review)
	return uid, body, err
}

// verifyResponse decodes a webhook's answer and checks it as kube does.
func verifyResponse(data []byte, version string, uid types.UID, mutating bool) (*admissionv1.AdmissionResponse, error) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, err
	}
	want := "admission.k8s.io/" + version
	if version == "v1" && (review.APIVersion != want || review.Kind != "AdmissionReview") {
		return nil, fmt.Errorf("expected webhook response of %s, Kind=AdmissionReview, got %s, Kind=%s", want, review.APIVersion, review.Kind)
	}
	resp := review.Response
	if resp == nil {
		return nil, errors.New("webhook response was absent")
	}
	if version == "v1beta1" {
		// v1beta1 asked for neither the uid nor the patch type.
		if len(resp.Patch) > 0 && resp.PatchType == nil {
			jsonPatch := admissionv1.PatchTypeJSONPatch
			resp.PatchType = &jsonPatch
		}
		return resp, nil
	}
	if resp.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, resp.UID)
	}
	hasPatch, hasType := len(resp.Patch) > 0, resp.PatchType != nil
	switch {
	case mutating && hasPatch && !hasType:
		return nil, errors.New("webhook returned response.patch but not response.patchType")
	case mutating && hasType && !hasPatch:
		return nil, errors.New("webhook returned response.patchType but not response.patch")
	case mutating && hasType && *resp.PatchType != admissionv1.PatchTypeJSONPatch:
		return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", *resp.PatchType)
	case !mutating && hasPatch:
		return nil, errors.New("validating webhook may not return response.patch")
	case !mutating && hasType:
		return nil, errors.New("validating webhook may not return response.patchType")
	}
	return resp, nil
}
