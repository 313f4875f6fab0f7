package e2eutil

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// ConversionWebhook is a real HTTPS conversion webhook: at /convert it
// answers ConversionReviews (v1), renaming spec.name of v1 to spec.fullName
// of v2 and back; /garbage answers what is no ConversionReview, /fail a
// failed conversion.
type ConversionWebhook struct {
	Server   *httptest.Server
	CABundle string // base64 PEM of the server's certificate

	Mu      sync.Mutex // guards reviews
	Reviews []string   // "<from> -> <desired>" per object converted at /convert
}

// Decode reads a ConversionReview request as kube sends it.
func (wh *ConversionWebhook) Decode(r *http.Request) (map[string]any, error) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		return nil, fmt.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
	}
	var review map[string]any
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		return nil, err
	}
	request, _ := review["request"].(map[string]any)
	if review["apiVersion"] != "apiextensions.k8s.io/v1" || review["kind"] != "ConversionReview" || request == nil || request["uid"] == "" {
		return nil, fmt.Errorf("not a v1 ConversionReview request: %v", review)
	}
	return review, nil
}

func (wh *ConversionWebhook) Seen() []string {
	wh.Mu.Lock()
	defer wh.Mu.Unlock()
	return slices.Clone(wh.Reviews)
}

func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// WebhookCRD is a CRD of conv.example.com whose v1 (storage) has
// spec.name and v2 spec.fullName, converted by wh at path.
func WebhookCRD(wh *ConversionWebhook, plural, kind, path string) string {
	return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.conv.example.com}
spec:
  group: conv.example.com
  scope: Namespaced
  names: {plural: ` + plural + `, singular: ` + strings.TrimSuffix(plural, "s") + `, kind: ` + kind + `}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: ` + wh.Server.URL + path + `
        caBundle: ` + wh.CABundle + `
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              name: {type: string}
              size: {type: integer}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              fullName: {type: string}
              size: {type: integer}
`
}

func ConvResource(d dynamic.Interface, plural, version, ns string) dynamic.ResourceInterface {
	return d.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: version, Resource: plural}).Namespace(ns)
}
