package e2e

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// TestFieldValidation: unknown and duplicate fields are refused with
// Strict, reported as warnings with Warn (the default) and dropped with
// Ignore.
func TestFieldValidation(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	const unknown = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","bogus":1},"data":{"k":"v"},"extra":true}`
	const duplicate = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"k":"v"},"data":{"k":"w"}}`
	post := func(validation, body, name string) response {
		return e.do(t, http.MethodPost, cmPath(ns, "")+"?fieldValidation="+validation, []byte(sprintf(body, name)))
	}

	r := post("Strict", unknown, "strict")
	r.wantStatus(t, 400, metav1.StatusReasonBadRequest,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus", unknown field "extra"`)
	r = post("Strict", duplicate, "strict")
	r.wantStatus(t, 400, metav1.StatusReasonBadRequest,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"`)
	e.do(t, http.MethodGet, cmPath(ns, "strict"), nil).wantStatus(t, 404, metav1.StatusReasonNotFound, "")

	r = post("Warn", unknown, "warn")
	if r.code != 201 || !hasWarning(r, `unknown field "extra"`) || !hasWarning(r, `unknown field "metadata.bogus"`) {
		t.Fatalf("Warn = %d %v", r.code, r.header.Values("Warning"))
	}
	r = e.do(t, http.MethodPost, cmPath(ns, ""), []byte(sprintf(duplicate, "default")))
	if r.code != 201 || !hasWarning(r, `duplicate field "data"`) {
		t.Fatalf("default (Warn) = %d %v", r.code, r.header.Values("Warning"))
	}
	r = post("Ignore", unknown, "ignore")
	if r.code != 201 || len(r.header.Values("Warning")) != 0 {
		t.Fatalf("Ignore = %d %v", r.code, r.header.Values("Warning"))
	}
	post("Sloppy", unknown, "x").wantStatus(t, 422, metav1.StatusReasonInvalid,
		`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sloppy": supported values: "", "Ignore", "Strict", "Warn"`)

	// client-go hands warnings to the config's WarningHandler.
	got := &warnings{}
	c := e.clientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = got })
	_, err := c.CoreV1().ConfigMaps(ns).Patch(ctx(t), "warn", types.MergePatchType, []byte(`{"spec":{"x":1}}`),
		metav1.PatchOptions{FieldValidation: "Warn"})
	if err != nil || !strings.Contains(got.joined(), `unknown field "spec"`) {
		t.Fatalf("patch with Warn: %v, warnings %q", err, got.joined())
	}
	_, err = c.CoreV1().ConfigMaps(ns).Patch(ctx(t), "warn", types.MergePatchType, []byte(`{"spec":{"x":1}}`),
		metav1.PatchOptions{FieldValidation: "Strict"})
	s := wantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	wantCause(t, s, metav1.CauseTypeFieldValueInvalid, "patch")
	if !strings.HasSuffix(s.Message, `strict decoding error: unknown field "spec"`) {
		t.Fatalf("message = %q", s.Message)
	}
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx(t), "warn", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("after the patches: %+v, %v", cm, err)
	}
}

func hasWarning(r response, text string) bool {
	for _, w := range r.header.Values("Warning") {
		if strings.Contains(strings.ReplaceAll(w, `\"`, `"`), text) {
			return true
		}
	}
	return false
}
