package e2e

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// conversionWebhook is a real HTTPS conversion webhook: at /convert it
// answers ConversionReviews (v1), renaming spec.name of v1 to spec.fullName
// of v2 and back; /garbage answers what is no ConversionReview, /fail a
// failed conversion, /slow nothing until the caller gives up.
type conversionWebhook struct {
	srv      *httptest.Server
	caBundle string // base64 PEM of the server's certificate

	mu      sync.Mutex // guards reviews
	reviews []string   // "<from> -> <desired>" per object converted at /convert
}

func newConversionWebhook(t *testing.T) *conversionWebhook {
	t.Helper()
	wh := &conversionWebhook{}
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		review, err := wh.decode(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		request := review["request"].(map[string]any)
		desired := request["desiredAPIVersion"].(string)
		var converted []any
		for _, o := range request["objects"].([]any) {
			obj := o.(map[string]any)
			from := obj["apiVersion"].(string)
			wh.mu.Lock()
			wh.reviews = append(wh.reviews, from+" -> "+desired)
			wh.mu.Unlock()
			if spec, ok := obj["spec"].(map[string]any); ok {
				rename := func(a, b string) {
					if v, ok := spec[a]; ok {
						spec[b] = v
						delete(spec, a)
					}
				}
				switch {
				case strings.HasSuffix(from, "/v1") && strings.HasSuffix(desired, "/v2"):
					rename("name", "fullName")
				case strings.HasSuffix(from, "/v2") && strings.HasSuffix(desired, "/v1"):
					rename("fullName", "name")
				}
			}
			obj["apiVersion"] = desired
			converted = append(converted, obj)
		}
		writeJSON(w, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": request["uid"], "convertedObjects": converted, "result": map[string]any{"status": "Success"}},
		})
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "this is not json")
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		review, err := wh.decode(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": review["request"].(map[string]any)["uid"],
				"result": map[string]any{"status": "Failure", "message": "cannot convert this"}},
		})
	})
	stop := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	wh.srv = httptest.NewTLSServer(mux)
	t.Cleanup(wh.srv.Close)
	// Before Close, which waits for the handlers: calls to /slow that
	// still wait end with the test.
	t.Cleanup(func() { close(stop) })
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: wh.srv.Certificate().Raw})
	wh.caBundle = base64.StdEncoding.EncodeToString(cert)
	return wh
}

// decode reads a ConversionReview request as kube sends it.
func (wh *conversionWebhook) decode(r *http.Request) (map[string]any, error) {
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

func (wh *conversionWebhook) seen() []string {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	return slices.Clone(wh.reviews)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// webhookCRD is a CRD of conv.example.com whose v1 (storage) has
// spec.name and v2 spec.fullName, converted by wh at path.
func webhookCRD(wh *conversionWebhook, plural, kind, path string) string {
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
        url: ` + wh.srv.URL + path + `
        caBundle: ` + wh.caBundle + `
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

func convResource(d dynamic.Interface, plural, version, ns string) dynamic.ResourceInterface {
	return d.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: version, Resource: plural}).Namespace(ns)
}

// TestCRDWebhookConversion: objects created at one version read, list,
// watch and update at the other through an HTTPS conversion webhook
// reached by URL and trusted through the CRD's caBundle.
func TestCRDWebhookConversion(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	wh := newConversionWebhook(t)
	e.createCRD(t, webhookCRD(wh, "widgets", "Widget", "/convert"))
	d := e.dynamic(t)
	v1, v2 := convResource(d, "widgets", "v1", ns), convResource(d, "widgets", "v2", ns)
	specField := func(u *unstructured.Unstructured, f string) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", f)
		return s
	}

	w, err := v2.Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Created at v1, the storage version: read at v2 through the webhook.
	a, err := v1.Create(ctx(t), fromYAML(t, "apiVersion: conv.example.com/v1\nkind: Widget\nmetadata: {name: a}\nspec: {name: alpha, size: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, w)
	if obj := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || obj.GetAPIVersion() != "conv.example.com/v2" || specField(obj, "fullName") != "alpha" {
		t.Fatalf("v2 watch event = %s %v, want ADDED a at v2 with spec.fullName", ev.Type, ev.Object)
	}
	got, err := v2.Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "conv.example.com/v2" || specField(got, "fullName") != "alpha" || specField(got, "name") != "" ||
		got.GetUID() != a.GetUID() || got.GetResourceVersion() != a.GetResourceVersion() {
		t.Fatalf("a at v2 = %v, want spec.fullName alpha", got.Object)
	}
	if !slices.Contains(wh.seen(), "conv.example.com/v1 -> conv.example.com/v2") {
		t.Fatalf("webhook saw %q, want a v1 object converted to v2", wh.seen())
	}

	// Created at v2: converted to v1 to be stored, answered at v2.
	b, err := v2.Create(ctx(t), fromYAML(t, "apiVersion: conv.example.com/v2\nkind: Widget\nmetadata: {name: b}\nspec: {fullName: beta, size: 2}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.GetAPIVersion() != "conv.example.com/v2" || specField(b, "fullName") != "beta" {
		t.Fatalf("created at v2 = %v", b.Object)
	}
	if !slices.Contains(wh.seen(), "conv.example.com/v2 -> conv.example.com/v1") {
		t.Fatalf("webhook saw %q, want the v2 object converted to v1 for storage", wh.seen())
	}
	atV1, err := v1.Get(ctx(t), "b", metav1.GetOptions{})
	if err != nil || specField(atV1, "name") != "beta" || specField(atV1, "fullName") != "" {
		t.Fatalf("b at v1 = %v, %v; want spec.name beta", atV1, err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || specField(ev.Object.(*unstructured.Unstructured), "fullName") != "beta" {
		t.Fatalf("v2 watch event = %s %v, want ADDED b", ev.Type, ev.Object)
	}

	list, err := v2.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetAPIVersion() != "conv.example.com/v2" || len(list.Items) != 2 ||
		specField(&list.Items[0], "fullName") != "alpha" || specField(&list.Items[1], "fullName") != "beta" {
		t.Fatalf("v2 list = %v", list.Items)
	}

	// Updated at v2, read at v1.
	_ = unstructured.SetNestedField(got.Object, "alpha-2", "spec", "fullName")
	updated, err := v2.Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil || specField(updated, "fullName") != "alpha-2" {
		t.Fatalf("update at v2 = %v, %v", updated, err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Modified || specField(ev.Object.(*unstructured.Unstructured), "fullName") != "alpha-2" {
		t.Fatalf("v2 watch event = %s %v, want MODIFIED a", ev.Type, ev.Object)
	}
	atV1, err = v1.Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil || specField(atV1, "name") != "alpha-2" || atV1.GetResourceVersion() != updated.GetResourceVersion() {
		t.Fatalf("a at v1 after the v2 update = %v, %v", atV1, err)
	}
}

// TestCRDWebhookConversionFailures: a webhook that answers garbage, fails
// the conversion or never answers (kube gives it 30s) fails the request
// with kube's 500 Status, which has no reason, and stores or changes
// nothing; reading an object the webhook cannot convert is kube's 500
// InternalError.
func TestCRDWebhookConversionFailures(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	wh := newConversionWebhook(t)
	const findKind = `struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`
	cases := []struct {
		plural, kind, path, message string
	}{
		{"garbages", "Garbage", "/garbage",
			"conversion webhook for conv.example.com/v2, Kind=Garbage failed: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type " + findKind},
		{"fails", "Fail", "/fail", "conversion webhook for conv.example.com/v2, Kind=Fail failed: cannot convert this"},
		{"slows", "Slow", "/slow",
			`conversion webhook for conv.example.com/v2, Kind=Slow failed: Post "` + wh.srv.URL + `/slow?timeout=30s": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
	}
	for _, c := range cases {
		e.createCRD(t, webhookCRD(wh, c.plural, c.kind, c.path))
	}
	d := e.dynamic(t)
	for _, c := range cases {
		t.Run(c.plural, func(t *testing.T) {
			t.Parallel()
			v1, v2 := convResource(d, c.plural, "v1", ns), convResource(d, c.plural, "v2", ns)
			// An object at the storage version needs no conversion to be
			// written or read at v1.
			existing, err := v1.Create(ctx(t), fromYAML(t, "apiVersion: conv.example.com/v1\nkind: "+c.kind+"\nmetadata: {name: existing}\nspec: {name: kept}\n"), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			keys := e.keysWith(t, "/conv.example.com/"+c.plural+"/")

			// A create at v2 must be converted to v1 to be stored.
			start := time.Now()
			_, err = v2.Create(ctx(t), fromYAML(t, "apiVersion: conv.example.com/v2\nkind: "+c.kind+"\nmetadata: {name: new}\nspec: {fullName: new-name}\n"), metav1.CreateOptions{})
			wantStatus(t, err, 500, metav1.StatusReasonUnknown, c.message)
			if c.path == "/slow" && time.Since(start) < 29*time.Second {
				t.Errorf("the webhook was given up after %v, want kube's 30s", time.Since(start))
			}
			if c.path == "/slow" {
				// One 30s wait is enough to show the timeout.
				return
			}
			_, err = v1.Get(ctx(t), "new", metav1.GetOptions{})
			wantStatus(t, err, 404, metav1.StatusReasonNotFound, c.plural+`.conv.example.com "new" not found`)

			// Reads at v2 of the object stored at v1 fail: a get with kube's
			// 500 InternalError; an update at v2, which reads the object
			// first, with a 500 too (kube's has no reason: see the report
			// of differences). Both tell the webhook's failure converting
			// from v1.
			fromV1 := strings.Replace(c.message, "conv.example.com/v2", "conv.example.com/v1", 1)
			_, err = v2.Get(ctx(t), "existing", metav1.GetOptions{})
			if s := wantStatus(t, err, 500, metav1.StatusReasonInternalError, ""); !strings.Contains(s.Message, fromV1) {
				t.Errorf("read at v2: message %q does not tell the webhook's failure", s.Message)
			}
			r := e.do(t, http.MethodPut, "/apis/conv.example.com/v2/namespaces/"+ns+"/"+c.plural+"/existing",
				[]byte(`{"apiVersion":"conv.example.com/v2","kind":"`+c.kind+`","metadata":{"name":"existing","resourceVersion":"`+existing.GetResourceVersion()+`"},"spec":{"fullName":"changed"}}`))
			if s := r.status(t); r.code != 500 || s.Code != 500 || !strings.Contains(s.Message, fromV1) {
				t.Errorf("update at v2 = %d %+v, want a 500 telling the webhook's failure", r.code, s)
			}

			got, err := v1.Get(ctx(t), "existing", metav1.GetOptions{})
			if err != nil || got.GetResourceVersion() != existing.GetResourceVersion() {
				t.Fatalf("existing after the failures = %v, %v; want it unchanged", got, err)
			}
			if now := e.keysWith(t, "/conv.example.com/"+c.plural+"/"); !slices.Equal(now, keys) {
				t.Fatalf("stored keys changed: %q, want %q", now, keys)
			}
		})
	}
}
