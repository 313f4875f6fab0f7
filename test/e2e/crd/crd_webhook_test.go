package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/base64"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func newConversionWebhook(t *testing.T) *e2eutil.ConversionWebhook {
	t.Helper()
	wh := &e2eutil.ConversionWebhook{}
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		review, err := wh.Decode(r)
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
			wh.Mu.Lock()
			wh.Reviews = append(wh.Reviews, from+" -> "+desired)
			wh.Mu.Unlock()
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
		e2eutil.WriteJSON(w, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": request["uid"], "convertedObjects": converted, "result": map[string]any{"status": "Success"}},
		})
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "this is not json")
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		review, err := wh.Decode(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e2eutil.WriteJSON(w, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": review["request"].(map[string]any)["uid"],
				"result": map[string]any{"status": "Failure", "message": "cannot convert this"}},
		})
	})
	wh.Server = httptest.NewTLSServer(mux)
	t.Cleanup(wh.Server.Close)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: wh.Server.Certificate().Raw})
	wh.CABundle = base64.StdEncoding.EncodeToString(cert)
	return wh
}

// TestCRDWebhookConversion: objects created at one version read, list,
// watch and update at the other through an HTTPS conversion webhook
// reached by URL and trusted through the CRD's caBundle.
func TestCRDWebhookConversion(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	wh := newConversionWebhook(t)
	e.CreateCRD(t, e2eutil.WebhookCRD(wh, "widgets", "Widget", "/convert"))
	d := e.Dynamic(t)
	v1, v2 := e2eutil.ConvResource(d, "widgets", "v1", ns), e2eutil.ConvResource(d, "widgets", "v2", ns)
	specField := func(u *unstructured.Unstructured, f string) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", f)
		return s
	}

	w, err := v2.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Created at v1, the storage version: read at v2 through the webhook.
	a, err := v1.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: conv.example.com/v1\nkind: Widget\nmetadata: {name: a}\nspec: {name: alpha, size: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := e2eutil.NextEvent(t, w)
	if obj := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || obj.GetAPIVersion() != "conv.example.com/v2" || specField(obj, "fullName") != "alpha" {
		t.Fatalf("v2 watch event = %s %v, want ADDED a at v2 with spec.fullName", ev.Type, ev.Object)
	}
	got, err := v2.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "conv.example.com/v2" || specField(got, "fullName") != "alpha" || specField(got, "name") != "" ||
		got.GetUID() != a.GetUID() || got.GetResourceVersion() != a.GetResourceVersion() {
		t.Fatalf("a at v2 = %v, want spec.fullName alpha", got.Object)
	}
	if !slices.Contains(wh.Seen(), "conv.example.com/v1 -> conv.example.com/v2") {
		t.Fatalf("webhook saw %q, want a v1 object converted to v2", wh.Seen())
	}

	// Created at v2: converted to v1 to be stored, answered at v2.
	b, err := v2.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: conv.example.com/v2\nkind: Widget\nmetadata: {name: b}\nspec: {fullName: beta, size: 2}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.GetAPIVersion() != "conv.example.com/v2" || specField(b, "fullName") != "beta" {
		t.Fatalf("created at v2 = %v", b.Object)
	}
	if !slices.Contains(wh.Seen(), "conv.example.com/v2 -> conv.example.com/v1") {
		t.Fatalf("webhook saw %q, want the v2 object converted to v1 for storage", wh.Seen())
	}
	atV1, err := v1.Get(e2eutil.Ctx(t), "b", metav1.GetOptions{})
	if err != nil || specField(atV1, "name") != "beta" || specField(atV1, "fullName") != "" {
		t.Fatalf("b at v1 = %v, %v; want spec.name beta", atV1, err)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added || specField(ev.Object.(*unstructured.Unstructured), "fullName") != "beta" {
		t.Fatalf("v2 watch event = %s %v, want ADDED b", ev.Type, ev.Object)
	}

	list, err := v2.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetAPIVersion() != "conv.example.com/v2" || len(list.Items) != 2 ||
		specField(&list.Items[0], "fullName") != "alpha" || specField(&list.Items[1], "fullName") != "beta" {
		t.Fatalf("v2 list = %v", list.Items)
	}

	// Updated at v2, read at v1.
	_ = unstructured.SetNestedField(got.Object, "alpha-2", "spec", "fullName")
	updated, err := v2.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	if err != nil || specField(updated, "fullName") != "alpha-2" {
		t.Fatalf("update at v2 = %v, %v", updated, err)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Modified || specField(ev.Object.(*unstructured.Unstructured), "fullName") != "alpha-2" {
		t.Fatalf("v2 watch event = %s %v, want MODIFIED a", ev.Type, ev.Object)
	}
	atV1, err = v1.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{})
	if err != nil || specField(atV1, "name") != "alpha-2" || atV1.GetResourceVersion() != updated.GetResourceVersion() {
		t.Fatalf("a at v1 after the v2 update = %v, %v", atV1, err)
	}
}

// TestCRDWebhookConversionFailures: a webhook that answers garbage or
// fails the conversion fails the request with kube's 500 Status, which has
// no reason, and stores or changes nothing; reading an object the webhook
// cannot convert is kube's 500 InternalError. (A webhook that never
// answers is given kube's 30 s: apiextensions/conversion's
// TestWebhookTimeout and TestWebhookDefaultTimeout, without the wait.)
func TestCRDWebhookConversionFailures(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	wh := newConversionWebhook(t)
	const findKind = `struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`
	cases := []struct {
		plural, kind, path, message string
	}{
		{"garbages", "Garbage", "/garbage",
			"conversion webhook for conv.example.com/v2, Kind=Garbage failed: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type " + findKind},
		{"fails", "Fail", "/fail", "conversion webhook for conv.example.com/v2, Kind=Fail failed: cannot convert this"},
	}
	for _, c := range cases {
		e.CreateCRD(t, e2eutil.WebhookCRD(wh, c.plural, c.kind, c.path))
	}
	d := e.Dynamic(t)
	for _, c := range cases {
		t.Run(c.plural, func(t *testing.T) {
			t.Parallel()
			v1, v2 := e2eutil.ConvResource(d, c.plural, "v1", ns), e2eutil.ConvResource(d, c.plural, "v2", ns)
			// An object at the storage version needs no conversion to be
			// written or read at v1.
			existing, err := v1.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: conv.example.com/v1\nkind: "+c.kind+"\nmetadata: {name: existing}\nspec: {name: kept}\n"), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			keys := e.KeysWith(t, "/conv.example.com/"+c.plural+"/")

			// A create at v2 must be converted to v1 to be stored.
			_, err = v2.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: conv.example.com/v2\nkind: "+c.kind+"\nmetadata: {name: new}\nspec: {fullName: new-name}\n"), metav1.CreateOptions{})
			e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, c.message)
			_, err = v1.Get(e2eutil.Ctx(t), "new", metav1.GetOptions{})
			e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, c.plural+`.conv.example.com "new" not found`)

			// Reads at v2 of the object stored at v1 fail: a get with kube's
			// 500 InternalError; an update at v2, which reads the object
			// first, with a 500 too (kube's has no reason: see the report
			// of differences). Both tell the webhook's failure converting
			// from v1.
			fromV1 := strings.Replace(c.message, "conv.example.com/v2", "conv.example.com/v1", 1)
			_, err = v2.Get(e2eutil.Ctx(t), "existing", metav1.GetOptions{})
			if s := e2eutil.WantStatus(t, err, 500, metav1.StatusReasonInternalError, ""); !strings.Contains(s.Message, fromV1) {
				t.Errorf("read at v2: message %q does not tell the webhook's failure", s.Message)
			}
			r := e.Do(t, http.MethodPut, "/apis/conv.example.com/v2/namespaces/"+ns+"/"+c.plural+"/existing",
				[]byte(`{"apiVersion":"conv.example.com/v2","kind":"`+c.kind+`","metadata":{"name":"existing","resourceVersion":"`+existing.GetResourceVersion()+`"},"spec":{"fullName":"changed"}}`))
			if s := r.Status(t); r.Code != 500 || s.Code != 500 || !strings.Contains(s.Message, fromV1) {
				t.Errorf("update at v2 = %d %+v, want a 500 telling the webhook's failure", r.Code, s)
			}

			got, err := v1.Get(e2eutil.Ctx(t), "existing", metav1.GetOptions{})
			if err != nil || got.GetResourceVersion() != existing.GetResourceVersion() {
				t.Fatalf("existing after the failures = %v, %v; want it unchanged", got, err)
			}
			if now := e.KeysWith(t, "/conv.example.com/"+c.plural+"/"); !slices.Equal(now, keys) {
				t.Fatalf("stored keys changed: %q, want %q", now, keys)
			}
		})
	}
}
