package conversion

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// received is one call a test webhook got.
type received struct {
	path, query, contentType, host, serverName string
	review                                     conversionReview
}

// testWebhook is a conversion webhook on an httptest TLS server. answer
// builds the response of each review; it is convertCronTabs unless set.
type testWebhook struct {
	srv      *httptest.Server
	caBundle []byte

	mu     sync.Mutex
	calls  []received
	answer func(review *conversionReview) any
}

func newTestWebhook(t *testing.T) *testWebhook {
	h := &testWebhook{}
	h.srv = httptest.NewTLSServer(h)
	t.Cleanup(h.srv.Close)
	h.caBundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	return h
}

func (h *testWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := received{path: r.URL.Path, query: r.URL.RawQuery, contentType: r.Header.Get("Content-Type"), host: r.Host}
	if r.TLS != nil {
		rec.serverName = r.TLS.ServerName
	}
	if err := json.Unmarshal(body, &rec.review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.calls = append(h.calls, rec)
	answer := h.answer
	h.mu.Unlock()
	if answer == nil {
		answer = convertCronTabs
	}
	w.Header().Set("Content-Type", "application/json")
	switch a := answer(&rec.review).(type) {
	case []byte:
		_, _ = w.Write(a)
	default:
		_ = json.NewEncoder(w).Encode(a)
	}
}

func (h *testWebhook) setAnswer(answer func(review *conversionReview) any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = answer
}

func (h *testWebhook) received() []received {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]received(nil), h.calls...)
}

// urlCRD is the test CRD converted by the webhook at url.
func urlCRD(url string, caBundle []byte, reviewVersions ...string) *apiextv1.CustomResourceDefinition {
	if len(reviewVersions) == 0 {
		reviewVersions = []string{"v1"}
	}
	return testCRD(&apiextv1.CustomResourceConversion{
		Strategy: apiextv1.WebhookConverter,
		Webhook: &apiextv1.WebhookConversion{
			ClientConfig:             &apiextv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			ConversionReviewVersions: reviewVersions,
		},
	})
}

// convertCronTabs converts between v1, whose spec has cronSpec, and v2,
// whose spec has schedule.
func convertCronTabs(review *conversionReview) any {
	req := review.Request
	var converted []runtime.RawExtension
	for _, raw := range req.Objects {
		var obj map[string]any
		if err := json.Unmarshal(raw.Raw, &obj); err != nil {
			return failure(review, err.Error())
		}
		spec, _ := obj["spec"].(map[string]any)
		switch req.DesiredAPIVersion {
		case "stable.example.com/v2":
			if v, ok := spec["cronSpec"]; ok {
				spec["schedule"] = v
				delete(spec, "cronSpec")
			}
		case "stable.example.com/v1":
			if v, ok := spec["schedule"]; ok {
				spec["cronSpec"] = v
				delete(spec, "schedule")
			}
		default:
			return failure(review, "cannot convert to "+req.DesiredAPIVersion)
		}
		obj["apiVersion"] = req.DesiredAPIVersion
		data, _ := json.Marshal(obj)
		converted = append(converted, runtime.RawExtension{Raw: data})
	}
	return &conversionReview{
		TypeMeta: review.TypeMeta,
		Response: &apiextv1.ConversionResponse{
			UID: req.UID, ConvertedObjects: converted, Result: metav1.Status{Status: metav1.StatusSuccess},
		},
	}
}

func failure(review *conversionReview, message string) *conversionReview {
	return &conversionReview{
		TypeMeta: review.TypeMeta,
		Response: &apiextv1.ConversionResponse{
			UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusFailure, Message: message},
		},
	}
}

// editConverted is an answer that converts and then edits each converted
// object.
func editConverted(edit func(obj map[string]any)) func(review *conversionReview) any {
	return func(review *conversionReview) any {
		answer := convertCronTabs(review).(*conversionReview)
		for i, raw := range answer.Response.ConvertedObjects {
			var obj map[string]any
			_ = json.Unmarshal(raw.Raw, &obj)
			edit(obj)
			answer.Response.ConvertedObjects[i].Raw, _ = json.Marshal(obj)
		}
		return answer
	}
}

func TestWebhookConvertsObject(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL+"/convert", h.caBundle), Options{})
	in := cronTab(v1, "a", map[string]any{"cronSpec": "* * * * */5", "image": "cron:1"})
	before := in.DeepCopy()

	out, err := c.Convert(context.Background(), in, v2)
	if err != nil {
		t.Fatal(err)
	}
	want := before.DeepCopy()
	want.SetAPIVersion("stable.example.com/v2")
	want.Object["spec"] = map[string]any{"schedule": "* * * * */5", "image": "cron:1"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %v\nwant %v", out, want)
	}
	if !reflect.DeepEqual(in, before) {
		t.Errorf("the input changed: %v", in)
	}

	back, err := c.Convert(context.Background(), out, v1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, before) {
		t.Errorf("round trip gave %v", back)
	}

	calls := h.received()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	call := calls[0]
	if call.path != "/convert" || call.query != "timeout=30s" || call.contentType != "application/json" {
		t.Errorf("call to %s?%s with %s", call.path, call.query, call.contentType)
	}
	review := call.review
	if review.APIVersion != "apiextensions.k8s.io/v1" || review.Kind != "ConversionReview" ||
		review.Request.DesiredAPIVersion != "stable.example.com/v2" || review.Request.UID == "" ||
		len(review.Request.Objects) != 1 || review.Response == nil {
		t.Errorf("review %+v", review)
	}
	if calls[1].review.Request.UID == review.Request.UID {
		t.Error("two requests with one uid")
	}
}

func TestWebhookConvertsList(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL, h.caBundle), Options{})
	in := cronTabList(v1,
		cronTab(v1, "a", map[string]any{"cronSpec": "1"}),
		cronTab(v2, "b", map[string]any{"schedule": "2"}),
		cronTab(v1, "c", map[string]any{"cronSpec": "3"}),
	)
	before := in.DeepCopy()

	out, err := c.Convert(context.Background(), in, v2)
	if err != nil {
		t.Fatal(err)
	}
	list := out.(*unstructured.UnstructuredList)
	if list.GetAPIVersion() != "stable.example.com/v2" || list.GetKind() != "CronTabList" || list.GetResourceVersion() != "9" {
		t.Errorf("list %v", list.Object)
	}
	for i, name := range []string{"a", "b", "c"} {
		item := list.Items[i]
		spec := item.Object["spec"].(map[string]any)
		if item.GetName() != name || item.GetAPIVersion() != "stable.example.com/v2" || spec["schedule"] != fmt.Sprint(i+1) {
			t.Errorf("item %d: %v", i, item.Object)
		}
	}
	if !reflect.DeepEqual(in, before) {
		t.Error("the input changed")
	}

	// Only the items not at v2 were sent, in order, in one request.
	calls := h.received()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	var sent []string
	for _, raw := range calls[0].review.Request.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, u.GetName())
	}
	if !reflect.DeepEqual(sent, []string{"a", "c"}) {
		t.Errorf("sent %v", sent)
	}

	// Nothing to convert: no call, the list just takes the version.
	out, err = c.Convert(context.Background(), out, v2)
	if err != nil || out.(*unstructured.UnstructuredList).GetAPIVersion() != "stable.example.com/v2" {
		t.Fatalf("%v %v", out, err)
	}
	allV2 := cronTabList(v1, cronTab(v2, "b", nil))
	out, err = c.Convert(context.Background(), allV2, v2)
	if err != nil || out.(*unstructured.UnstructuredList).GetAPIVersion() != "stable.example.com/v2" {
		t.Fatalf("%v %v", out, err)
	}
	if n := len(h.received()); n != 1 {
		t.Errorf("%d calls for lists already at v2", n)
	}
}

func TestWebhookSkipsObjectsAtTarget(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL, h.caBundle), Options{})
	in := cronTab(v2, "a", map[string]any{"schedule": "1"})
	out, err := c.Convert(context.Background(), in, v2)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("%v %v", out, err)
	}
	if out == runtime.Object(in) {
		t.Error("the result is the input")
	}
	// An object of only apiVersion and kind is converted without the webhook.
	empty := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab"}}
	out, err = c.Convert(context.Background(), empty, v2)
	if err != nil || out.(*unstructured.Unstructured).GetAPIVersion() != "stable.example.com/v2" {
		t.Fatalf("%v %v", out, err)
	}
	if n := len(h.received()); n != 0 {
		t.Errorf("%d calls", n)
	}
}

func TestWebhookReviewVersions(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL, h.caBundle, "v2", "v1beta1", "v1"), Options{})
	if _, err := c.Convert(context.Background(), cronTab(v1, "a", map[string]any{"cronSpec": "1"}), v2); err != nil {
		t.Fatal(err)
	}
	if got := h.received()[0].review.APIVersion; got != "apiextensions.k8s.io/v1beta1" {
		t.Errorf("sent a %s ConversionReview", got)
	}
	// kube does not check the uid of v1beta1 answers.
	h.setAnswer(func(review *conversionReview) any {
		answer := convertCronTabs(review).(*conversionReview)
		answer.Response.UID = "other"
		return answer
	})
	if _, err := c.Convert(context.Background(), cronTab(v1, "a", map[string]any{"cronSpec": "1"}), v2); err != nil {
		t.Fatal(err)
	}

	none := newConverter(t, urlCRD(h.srv.URL, h.caBundle, "v2"), Options{})
	_, err := none.Convert(context.Background(), cronTab(v1, "a", nil), v2)
	if err == nil || err.Error() != "no supported conversion review versions" {
		t.Errorf("got %v", err)
	}
}

// TestWebhookTimeout: a webhook that does not answer is given up after
// the timeout, with kube's error. The webhook answers only when the test
// ends, so the call can end only by the timeout: no clock is read.
func TestWebhookTimeout(t *testing.T) {
	h := newTestWebhook(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	h.setAnswer(func(review *conversionReview) any {
		<-release
		return convertCronTabs(review)
	})
	c := newConverter(t, urlCRD(h.srv.URL+"/convert", h.caBundle), Options{Timeout: 100 * time.Millisecond})
	_, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2)
	want := fmt.Sprintf(`conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "%s/convert?timeout=100ms": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, h.srv.URL)
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	checkStatusError(t, err)
}

// TestWebhookDefaultTimeout: without a timeout of its own, a call is
// given kube's 30 s, and tells the webhook so.
func TestWebhookDefaultTimeout(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL+"/convert", h.caBundle), Options{})
	if _, err := c.Convert(context.Background(), cronTab(v1, "a", map[string]any{"cronSpec": "1"}), v2); err != nil {
		t.Fatal(err)
	}
	if calls := h.received(); len(calls) != 1 || calls[0].query != "timeout=30s" {
		t.Errorf("calls %+v, want one with timeout=30s", calls)
	}
}

func TestWebhookBadAnswers(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL, h.caBundle), Options{})
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTab "
	for _, tc := range []struct {
		name   string
		answer func(review *conversionReview) any
		list   bool
		want   string
	}{
		// kube reads an answer that does not start with '{' as YAML: these
		// are the messages of kube-apiserver v1.37.2 for such answers.
		{"garbage", func(*conversionReview) any { return []byte("<html>no</html>") },
			false, prefix + `failed: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`},
		{"array", func(*conversionReview) any { return []byte("[1]") },
			false, prefix + `failed: couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`},
		{"bad yaml", func(*conversionReview) any { return []byte("a: b: c") },
			false, prefix + "failed: yaml: mapping values are not allowed in this context"},
		{"bad json", func(*conversionReview) any { return []byte("{bad") },
			false, prefix + "failed: couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"},
		{"kind not a string", func(*conversionReview) any { return []byte(`{"kind": 5}`) },
			false, prefix + "failed: couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string"},
		{"no kind", func(review *conversionReview) any {
			answer := convertCronTabs(review).(*conversionReview)
			answer.TypeMeta = metav1.TypeMeta{}
			return answer
		}, false, prefix + "failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind="},
		{"no response", func(review *conversionReview) any {
			return &conversionReview{TypeMeta: review.TypeMeta}
		}, false, prefix + "failed: no response provided"},
		{"wrong uid", func(review *conversionReview) any {
			answer := convertCronTabs(review).(*conversionReview)
			answer.Response.UID = "wrong"
			return answer
		}, false, "<uid>"},
		{"failure with message", func(review *conversionReview) any {
			return failure(review, "cannot convert crontabs today")
		}, false, prefix + "failed: cannot convert crontabs today"},
		{"failure without message", func(review *conversionReview) any {
			return failure(review, "")
		}, false, prefix + "failed: response.result.status was 'Failure', not 'Success'"},
		{"no objects", func(review *conversionReview) any {
			answer := convertCronTabs(review).(*conversionReview)
			answer.Response.ConvertedObjects = nil
			return answer
		}, false, prefix + "returned 0 objects, expected 1"},
		{"too many objects", func(review *conversionReview) any {
			answer := convertCronTabs(review).(*conversionReview)
			answer.Response.ConvertedObjects = append(answer.Response.ConvertedObjects, answer.Response.ConvertedObjects...)
			return answer
		}, true, "conversion webhook for stable.example.com/v1, Kind=CronTabList returned 4 objects, expected 2"},
		{"object not json", func(review *conversionReview) any {
			answer := convertCronTabs(review).(*conversionReview)
			answer.Response.ConvertedObjects[0].Raw = []byte(`"text"`)
			return answer
		}, true, "conversion webhook for stable.example.com/v1, Kind=CronTabList returned invalid converted object at index 0: "},
		{"wrong version", editConverted(func(obj map[string]any) { obj["apiVersion"] = "stable.example.com/v1" }),
			false, prefix + "returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v1)"},
		{"wrong kind", editConverted(func(obj map[string]any) { obj["kind"] = "Cron" }),
			false, prefix + "returned invalid object at index 0: invalid kind (expected CronTab, received Cron)"},
		{"wrong kind in list", editConverted(func(obj map[string]any) { obj["kind"] = "Cron" }),
			true, "conversion webhook for stable.example.com/v1, Kind=CronTabList returned invalid converted object at index 0: invalid kind (expected CronTab, received Cron)"},
		{"changed name", editConverted(func(obj map[string]any) { obj["metadata"].(map[string]any)["name"] = "b" }),
			false, prefix + "returned invalid object: must have the same name: a != b"},
		{"changed name in list", editConverted(func(obj map[string]any) { obj["metadata"].(map[string]any)["name"] = "z" }),
			true, "conversion webhook for stable.example.com/v1, Kind=CronTabList returned invalid converted object at index 0: must have the same name: a != z"},
		{"changed namespace", editConverted(func(obj map[string]any) { obj["metadata"].(map[string]any)["namespace"] = "kube-system" }),
			false, prefix + "returned invalid object: must have the same namespace: default != kube-system"},
		{"changed uid", editConverted(func(obj map[string]any) { obj["metadata"].(map[string]any)["uid"] = "other" }),
			false, prefix + "returned invalid object: must have the same UID: uid-a != other"},
		{"no metadata", editConverted(func(obj map[string]any) { delete(obj, "metadata") }),
			false, prefix + "returned invalid object: must have the same name: a != "},
		{"invalid label", editConverted(func(obj map[string]any) {
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"app": "not valid!"}
		}), false, prefix + `returned invalid metadata: metadata.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"label not a string", editConverted(func(obj map[string]any) {
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"app": 1}
		}), false, prefix + "returned invalid metadata: metadata.labels[app] must be a string, but is int64 in converted object"},
		{"annotations not a map", editConverted(func(obj map[string]any) {
			obj["metadata"].(map[string]any)["annotations"] = "x"
		}), true, "conversion webhook for stable.example.com/v1, Kind=CronTabList returned invalid metadata in object at index 0: invalid metadata.annotations of type string in converted object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.setAnswer(tc.answer)
			var in runtime.Object = cronTab(v1, "a", map[string]any{"cronSpec": "1"})
			if tc.list {
				in = cronTabList(v1, cronTab(v1, "a", nil), cronTab(v1, "b", nil))
			}
			_, err := c.Convert(context.Background(), in, v2)
			if err == nil {
				t.Fatal("no error")
			}
			checkStatusError(t, err)
			switch {
			case tc.want == "<uid>":
				uid := h.received()[len(h.received())-1].review.Request.UID
				if want := fmt.Sprintf(prefix+`failed: expected response.uid=%q, got "wrong"`, uid); err.Error() != want {
					t.Errorf("got  %s\nwant %s", err, want)
				}
			case strings.HasSuffix(tc.want, ": "):
				if !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("got  %s\nwant %s...", err, tc.want)
				}
			case err.Error() != tc.want:
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestWebhookHTTPErrors(t *testing.T) {
	var mu sync.Mutex
	var handler http.HandlerFunc
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h(w, r)
	}))
	defer srv.Close()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c := newConverter(t, urlCRD(srv.URL, caBundle), Options{MaxResponseBytes: 1 << 10})
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTab failed: "
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"500 text", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, "the converter crashed\n")
		}, prefix + `an error on the server ("the converter crashed") has prevented the request from succeeding`},
		{"502 json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"oops": true}`)
		}, prefix + `an error on the server ("unknown") has prevented the request from succeeding`},
		{"403 status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"crontabs are not for you","code":403}`)
		}, prefix + "crontabs are not for you"},
		{"404", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, prefix + "the server could not find the requested resource"},
		{"empty 200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
		}, prefix + "0-length response with status code: 200 and content type: application/json"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"kind":"ConversionReview","pad":"`+strings.Repeat("x", 2000)+`"}`)
		}, prefix + "the response of the webhook is larger than 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			handler = tc.handler
			mu.Unlock()
			_, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestWebhookUntrustedCertificate(t *testing.T) {
	h := newTestWebhook(t)
	// The system roots do not trust httptest's certificate.
	c := newConverter(t, urlCRD(h.srv.URL, nil), Options{})
	_, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2)
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") ||
		!strings.HasPrefix(err.Error(), `conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "`+h.srv.URL+`/?timeout=30s": tls: `) {
		t.Errorf("got %v", err)
	}
	// A caBundle of blanks is none.
	c = newConverter(t, urlCRD(h.srv.URL, []byte(" \n")), Options{})
	if _, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2); err == nil {
		t.Error("a blank caBundle trusted the webhook")
	}
}

func TestWebhookMetadata(t *testing.T) {
	h := newTestWebhook(t)
	c := newConverter(t, urlCRD(h.srv.URL, h.caBundle), Options{})
	h.setAnswer(editConverted(func(obj map[string]any) {
		meta := obj["metadata"].(map[string]any)
		meta["labels"] = map[string]any{"app": "cron", "converted": "yes"}
		meta["annotations"] = map[string]any{"example.com/by": "webhook"}
		meta["finalizers"] = []any{"example.com/other"}
		meta["resourceVersion"] = "1"
		meta["generation"] = int64(5)
	}))
	for _, in := range []runtime.Object{
		cronTab(v1, "a", map[string]any{"cronSpec": "1"}),
		cronTabList(v1, cronTab(v1, "a", map[string]any{"cronSpec": "1"})),
	} {
		out, err := c.Convert(context.Background(), in, v2)
		if err != nil {
			t.Fatal(err)
		}
		obj, ok := out.(*unstructured.Unstructured)
		if !ok {
			obj = &out.(*unstructured.UnstructuredList).Items[0]
		}
		want := map[string]any{
			"name": "a", "namespace": "default", "uid": "uid-a",
			"resourceVersion": "7", "finalizers": []any{"example.com/keep"},
			"labels":      map[string]any{"app": "cron", "converted": "yes"},
			"annotations": map[string]any{"example.com/by": "webhook"},
		}
		if got := obj.Object["metadata"]; !reflect.DeepEqual(got, want) {
			t.Errorf("metadata %v\nwant %v", got, want)
		}
		if obj.Object["spec"].(map[string]any)["schedule"] != "1" {
			t.Errorf("spec %v", obj.Object["spec"])
		}
	}

	// Labels the webhook drops are dropped.
	h.setAnswer(editConverted(func(obj map[string]any) {
		delete(obj["metadata"].(map[string]any), "labels")
	}))
	out, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2)
	if err != nil {
		t.Fatal(err)
	}
	if labels := out.(*unstructured.Unstructured).GetLabels(); labels != nil {
		t.Errorf("labels %v", labels)
	}
}

// serviceCert is a self-signed certificate, its own CA, for dnsNames.
func serviceCert(t *testing.T, dnsNames ...string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: dnsNames[0]},
		DNSNames:              dnsNames,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// resolverFunc is a ServiceResolver.
type resolverFunc func(namespace, name string, port int32) (*url.URL, error)

func (f resolverFunc) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return f(namespace, name, port)
}

func TestWebhookService(t *testing.T) {
	h := &testWebhook{}
	h.srv = httptest.NewUnstartedServer(h)
	cert, caBundle := serviceCert(t, "conv.webhooks.svc")
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	h.srv.StartTLS()
	defer h.srv.Close()

	var mu sync.Mutex
	var resolved []string
	resolver := resolverFunc(func(namespace, name string, port int32) (*url.URL, error) {
		mu.Lock()
		defer mu.Unlock()
		resolved = append(resolved, fmt.Sprintf("%s/%s:%d", namespace, name, port))
		return url.Parse(h.srv.URL)
	})
	path := "/crontabs/convert"
	port := int32(8443)
	crd := testCRD(&apiextv1.CustomResourceConversion{
		Strategy: apiextv1.WebhookConverter,
		Webhook: &apiextv1.WebhookConversion{
			ClientConfig: &apiextv1.WebhookClientConfig{
				Service:  &apiextv1.ServiceReference{Namespace: "webhooks", Name: "conv", Path: &path, Port: &port},
				CABundle: caBundle,
			},
			ConversionReviewVersions: []string{"v1"},
		},
	})
	c := newConverter(t, crd, Options{ServiceResolver: resolver, Timeout: 5 * time.Second})
	for range 2 {
		out, err := c.Convert(context.Background(), cronTab(v1, "a", map[string]any{"cronSpec": "1"}), v2)
		if err != nil {
			t.Fatal(err)
		}
		if out.(*unstructured.Unstructured).Object["spec"].(map[string]any)["schedule"] != "1" {
			t.Errorf("converted %v", out)
		}
	}
	calls := h.received()
	call := calls[0]
	if call.path != path || call.query != "timeout=5s" || call.host != "conv.webhooks.svc:8443" || call.serverName != "conv.webhooks.svc" {
		t.Errorf("call %+v", call)
	}
	mu.Lock()
	if !reflect.DeepEqual(resolved, []string{"webhooks/conv:8443", "webhooks/conv:8443"}) {
		t.Errorf("resolved %v", resolved)
	}
	mu.Unlock()

	// A resolver's failure is the webhook's.
	failing := newConverter(t, crd, Options{ServiceResolver: resolverFunc(func(string, string, int32) (*url.URL, error) {
		return nil, fmt.Errorf("service webhooks/conv has no endpoints")
	})})
	_, err := failing.Convert(context.Background(), cronTab(v1, "a", nil), v2)
	want := `conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "https://conv.webhooks.svc:8443/crontabs/convert?timeout=30s": service webhooks/conv has no endpoints`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestWebhookDialAndDefaultResolver(t *testing.T) {
	h := &testWebhook{}
	h.srv = httptest.NewUnstartedServer(h)
	cert, caBundle := serviceCert(t, "conv.webhooks.svc", "webhook.example.test")
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	h.srv.StartTLS()
	defer h.srv.Close()

	var mu sync.Mutex
	var dialed []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, h.srv.Listener.Addr().String())
	}
	opts := Options{DialContext: dial}

	// A service without port or path: port 443 and path /, dialed by the
	// default resolver's name.
	crd := testCRD(&apiextv1.CustomResourceConversion{
		Strategy: apiextv1.WebhookConverter,
		Webhook: &apiextv1.WebhookConversion{
			ClientConfig: &apiextv1.WebhookClientConfig{
				Service:  &apiextv1.ServiceReference{Namespace: "webhooks", Name: "conv"},
				CABundle: caBundle,
			},
			ConversionReviewVersions: []string{"v1"},
		},
	})
	if _, err := newConverter(t, crd, opts).Convert(context.Background(), cronTab(v1, "a", nil), v2); err != nil {
		t.Fatal(err)
	}
	// A URL with a DNS name.
	crd = urlCRD("https://webhook.example.test:9443/convert/", caBundle)
	if _, err := newConverter(t, crd, opts).Convert(context.Background(), cronTab(v1, "a", nil), v2); err != nil {
		t.Fatal(err)
	}
	calls := h.received()
	if calls[0].path != "/" || calls[0].host != "conv.webhooks.svc:443" || calls[1].path != "/convert" || calls[1].serverName != "webhook.example.test" {
		t.Errorf("calls %+v", calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(dialed, []string{"conv.webhooks.svc:443", "webhook.example.test:9443"}) {
		t.Errorf("dialed %v", dialed)
	}
}

func TestWebhookClientConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  *apiextv1.WebhookClientConfig
		want string
	}{
		{&apiextv1.WebhookClientConfig{}, `failed calling webhook "conversion_webhook_for_crontabs.stable.example.com": webhook configuration must have either service or URL`},
		{nil, `failed calling webhook "conversion_webhook_for_crontabs.stable.example.com": webhook configuration must have either service or URL`},
		{&apiextv1.WebhookClientConfig{URL: ptr("https://a b/")}, `failed calling webhook "conversion_webhook_for_crontabs.stable.example.com": Unparsable URL: parse "https://a b/": invalid character " " in host name`},
		{&apiextv1.WebhookClientConfig{URL: ptr("https://a/"), CABundle: []byte("not a certificate")}, "unable to load root certificates: no valid certificate authority data seen"},
	} {
		crd := testCRD(&apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook:  &apiextv1.WebhookConversion{ClientConfig: tc.cfg, ConversionReviewVersions: []string{"v1"}},
		})
		if _, err := New(crd, Options{}); err == nil || err.Error() != tc.want {
			t.Errorf("got  %v\nwant %s", err, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestClientCache(t *testing.T) {
	h := newTestWebhook(t)
	cache := NewClientCache()
	opts := Options{Clients: cache}
	a := newConverter(t, urlCRD(h.srv.URL, h.caBundle), opts).(*converter)
	changed := urlCRD(h.srv.URL, h.caBundle)
	changed.Spec.Versions = append(changed.Spec.Versions, apiextv1.CustomResourceDefinitionVersion{Name: "v4", Served: true})
	b := newConverter(t, changed, opts).(*converter)
	other := newConverter(t, urlCRD(h.srv.URL+"/other", h.caBundle), opts).(*converter)
	uncached := newConverter(t, urlCRD(h.srv.URL, h.caBundle), Options{}).(*converter)

	client := func(c *converter) *webhookClient { return c.strategy.(*webhookStrategy).client }
	if client(a) != client(b) {
		t.Error("a changed CRD with the same clientConfig got a new client")
	}
	if client(a) == client(other) || client(a) == client(uncached) {
		t.Error("clients shared across clientConfigs or without a cache")
	}
	for _, c := range []*converter{a, b, other} {
		if _, err := c.Convert(context.Background(), cronTab(v1, "a", nil), v2); err != nil {
			t.Fatal(err)
		}
	}
}
