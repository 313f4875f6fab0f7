package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"sigs.k8s.io/yaml"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// conversionReview is the ConversionReview of apiextensions.k8s.io/v1 and
// of v1beta1, which have the same shape.
type conversionReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *apiextv1.ConversionRequest  `json:"request,omitempty"`
	Response        *apiextv1.ConversionResponse `json:"response,omitempty"`
}

// supportedReviewVersions are the ConversionReview versions this server
// sends, by their version in apiextensions.k8s.io.
var supportedReviewVersions = map[string]bool{"v1": true, "v1beta1": true}

// webhookStrategy calls a CRD's conversion webhook.
type webhookStrategy struct {
	client *webhookClient
	// reviewVersion is the first of the webhook's conversionReviewVersions
	// this server supports; empty when there is none, which fails every
	// conversion, as in kube.
	reviewVersion    string
	timeout          time.Duration
	maxResponseBytes int64
}

func newWebhookStrategy(crd *apiextv1.CustomResourceDefinition, opts Options) (*webhookStrategy, error) {
	webhook := crd.Spec.Conversion.Webhook
	if webhook == nil || webhook.ClientConfig == nil {
		return nil, callError(crd.Name, errors.New("webhook configuration must have either service or URL"))
	}
	client, err := clientFor(crd.Name, webhook.ClientConfig, &opts)
	if err != nil {
		return nil, err
	}
	w := &webhookStrategy{client: client, timeout: opts.Timeout, maxResponseBytes: opts.MaxResponseBytes}
	if w.timeout <= 0 {
		w.timeout = DefaultTimeout
	}
	for _, v := range webhook.ConversionReviewVersions {
		if supportedReviewVersions[v] {
			w.reviewVersion = v
			break
		}
	}
	return w, nil
}

func (w *webhookStrategy) convert(ctx context.Context, in runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	// An object of only apiVersion and kind converts to one: the webhook is
	// not asked, as in kube, whose storage converts such objects at start.
	if isEmptyObject(in) {
		return setAPIVersion(in, to), nil
	}
	inGVK := in.GetObjectKind().GroupVersionKind()
	desired := to.String()

	// Only the objects not yet at the desired version go to the webhook.
	list, isList := in.(*unstructured.UnstructuredList)
	var originals []*unstructured.Unstructured
	if isList {
		for i := range list.Items {
			if list.Items[i].GetAPIVersion() != desired {
				originals = append(originals, &list.Items[i])
			}
		}
	} else if inGVK.GroupVersion().String() != desired {
		originals = append(originals, in.(*unstructured.Unstructured))
	}

	if w.reviewVersion == "" {
		return nil, errors.New("no supported conversion review versions")
	}
	if len(originals) == 0 {
		if isList {
			list.SetAPIVersion(desired)
		}
		return in, nil
	}

	converted, err := w.review(ctx, inGVK, desired, originals)
	if err != nil {
		return nil, err
	}

	if !isList {
		out, err := decodeConverted(converted[0])
		if err != nil {
			return nil, err
		}
		if got := out.GroupVersionKind().GroupVersion(); got != to {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid object at index 0: invalid groupVersion (expected %v, received %v)", inGVK, to, got)
		}
		if got := out.GetKind(); got != inGVK.Kind {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid object at index 0: invalid kind (expected %v, received %v)", inGVK, inGVK.Kind, got)
		}
		if err := sameIdentity(originals[0], out); err != nil {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid object: %v", inGVK, err)
		}
		if err := restoreMetadata(originals[0], out); err != nil {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata: %v", inGVK, err)
		}
		return out, nil
	}

	for i, original := range originals {
		out, err := decodeConverted(converted[i])
		if err != nil {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: %v", inGVK, i, err)
		}
		if got := out.GroupVersionKind().GroupVersion(); got != to {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)", inGVK, i, to, got)
		}
		if want, got := original.GetKind(), out.GetKind(); want != got {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: invalid kind (expected %v, received %v)", inGVK, i, want, got)
		}
		if err := sameIdentity(original, out); err != nil {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: %v", inGVK, i, err)
		}
		if err := restoreMetadata(original, out); err != nil {
			return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata in object at index %v: %v", inGVK, i, err)
		}
		// original points into list.Items: replace the item in place.
		*original = *out
	}
	list.SetAPIVersion(desired)
	return list, nil
}

// review sends originals to the webhook in a ConversionReview and returns
// its converted objects, one for each.
func (w *webhookStrategy) review(ctx context.Context, inGVK schema.GroupVersionKind, desired string, originals []*unstructured.Unstructured) ([]runtime.RawExtension, error) {
	uid := uuid.NewUUID()
	objects := make([]runtime.RawExtension, len(originals))
	for i, o := range originals {
		objects[i] = runtime.RawExtension{Object: o}
	}
	reviewAPIVersion := apiextv1.GroupName + "/" + w.reviewVersion
	body, err := json.Marshal(&conversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: reviewAPIVersion, Kind: "ConversionReview"},
		Request:  &apiextv1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: objects},
		Response: &apiextv1.ConversionResponse{},
	})
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %v failed: %v", inGVK, err)
	}
	answer, err := w.client.post(ctx, body, w.timeout, w.maxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %v failed: %v", inGVK, err)
	}
	converted, err := w.convertedObjects(uid, answer)
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %v failed: %v", inGVK, err)
	}
	if len(converted) != len(originals) {
		return nil, fmt.Errorf("conversion webhook for %v returned %d objects, expected %d", inGVK, len(converted), len(originals))
	}
	return converted, nil
}

// convertedObjects checks a webhook's ConversionReview and returns its
// converted objects.
func (w *webhookStrategy) convertedObjects(uid types.UID, body []byte) ([]runtime.RawExtension, error) {
	// kube decodes the answer with its universal deserializer: as JSON
	// when it starts with '{', else as YAML, turned into JSON first.
	if !utilyaml.IsJSONBuffer(body) {
		converted, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, err
		}
		body = converted
	}
	// The type kube's decoder finds the kind with, which its errors name.
	var findKind struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(body, &findKind); err != nil {
		return nil, fmt.Errorf("couldn't get version/kind; json parse error: %v", err)
	}
	typeMeta := metav1.TypeMeta{APIVersion: findKind.APIVersion, Kind: findKind.Kind}
	wantGVK := schema.GroupVersionKind{Group: apiextv1.GroupName, Version: w.reviewVersion, Kind: "ConversionReview"}
	gotGVK := typeMeta.GroupVersionKind()
	switch {
	case w.reviewVersion == "v1" && gotGVK != wantGVK:
		return nil, fmt.Errorf("expected webhook response of %v, got %v", wantGVK, gotGVK)
	case w.reviewVersion == "v1beta1" && (typeMeta.APIVersion != "" || typeMeta.Kind != "") && gotGVK != wantGVK:
		// kube does not check a v1beta1 answer's apiVersion and kind but
		// cannot decode one of another type.
		return nil, fmt.Errorf("expected webhook response of %v, got %v", wantGVK, gotGVK)
	}
	var review conversionReview
	if err := utiljson.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	if review.Response == nil {
		return nil, errors.New("no response provided")
	}
	// kube checks the uid of v1 answers only.
	if w.reviewVersion == "v1" && review.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, review.Response.UID)
	}
	if result := review.Response.Result; result.Status != metav1.StatusSuccess {
		if result.Message != "" {
			return nil, errors.New(result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", result.Status)
	}
	return review.Response.ConvertedObjects, nil
}

func decodeConverted(raw runtime.RawExtension) (*unstructured.Unstructured, error) {
	if u, ok := raw.Object.(*unstructured.Unstructured); ok {
		return u, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw.Raw); err != nil {
		return nil, err
	}
	return u, nil
}

// sameIdentity checks that a webhook kept the kind, name, namespace and uid
// of an object.
func sameIdentity(original, converted *unstructured.Unstructured) error {
	if a, b := original.GetKind(), converted.GetKind(); a != b {
		return fmt.Errorf("must have the same kind: %v != %v", a, b)
	}
	if a, b := original.GetName(), converted.GetName(); a != b {
		return fmt.Errorf("must have the same name: %v != %v", a, b)
	}
	if a, b := original.GetNamespace(), converted.GetNamespace(); a != b {
		return fmt.Errorf("must have the same namespace: %v != %v", a, b)
	}
	if a, b := original.GetUID(), converted.GetUID(); a != b {
		return fmt.Errorf("must have the same UID: %v != %v", a, b)
	}
	return nil
}

// restoreMetadata gives converted the metadata of original, but for labels
// and annotations, which a webhook may change; changed ones must be valid.
func restoreMetadata(original, converted *unstructured.Unstructured) error {
	m, ok := converted.Object["metadata"]
	if !ok {
		return errors.New("missing metadata in converted object")
	}
	answered, ok := m.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", m)
	}

	restored := map[string]any{}
	if m, ok := original.Object["metadata"]; ok {
		copied, ok := runtime.DeepCopyJSONValue(m).(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata of type %T in input object", m)
		}
		restored = copied
	}

	for _, name := range []string{"labels", "annotations"} {
		v := answered[name]
		if v == nil {
			delete(restored, name)
			continue
		}
		answeredMap, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", name, v)
		}
		originalMap, ok := restored[name].(map[string]any)
		if !ok && restored[name] != nil {
			return fmt.Errorf("invalid metadata.%s of type %T in original object", name, restored[name])
		}
		changed := len(originalMap) != len(answeredMap)
		strs := make(map[string]string, len(answeredMap))
		for k, v := range answeredMap {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", name, k, v)
			}
			strs[k] = s
			if o, ok := originalMap[k].(string); !ok || o != s {
				changed = true
			}
		}
		if changed {
			var errs field.ErrorList
			if name == "labels" {
				errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
			} else {
				// kube's path, singular.
				errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
			}
			if len(errs) > 0 {
				return errs.ToAggregate()
			}
		}
		restored[name] = answeredMap
	}
	converted.Object["metadata"] = restored
	return nil
}

// isEmptyObject says whether in is an object of only apiVersion and kind.
func isEmptyObject(in runtime.Object) bool {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || len(u.Object) != 2 {
		return false
	}
	_, hasKind := u.Object["kind"]
	_, hasAPIVersion := u.Object["apiVersion"]
	return hasKind && hasAPIVersion
}
