package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBadInput: malformed or hostile requests get a 4xx Status, change no
// stored data, write nothing outside the resource's keys and never crash
// the server.
func TestBadInput(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	before := e.ConfigMap(t, ns, "a", map[string]string{"l": "v"})
	keys := withoutLoopObjects(e.EtcdKeys(t))
	cm := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"changed"}}`)
	}
	a := e2eutil.CMPath(ns, "a")
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"` + strings.Repeat("x", 3*1024*1024) + `"}}`
	for _, tt := range []struct {
		method, path string
		body         []byte
		contentType  string
		code         int
		message      string // a prefix of the Status message
	}{
		{"PUT", a, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"`), "", 400, ""},
		{"POST", e2eutil.CMPath(ns, ""), []byte("{]"), "", 400, ""},
		{"PUT", a, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: [name: a\n"), "application/yaml", 400, ""},
		{"PUT", a, []byte("k8s\x00garbage"), protobuf, 400, ""},
		{"PUT", a, []byte("not protobuf at all"), protobuf, 400, ""},
		{"PUT", a, cm("a"), "text/plain", 415, ""},
		{"PUT", a, []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`), "", 400,
			`Secret in version "v1" cannot be handled as a ConfigMap`},
		{"PUT", a, []byte(`{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"a"}}`), "", 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1"`},
		{"POST", "/api/v1/namespaces/" + ns + "/events", []byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"}}`), "", 400,
			`the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)`},
		{"PUT", a, cm("b"), "", 400, "the name of the object (b) does not match the name on the URL (a)"},
		{"PUT", a, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"other"}}`), "", 400,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"PUT", a, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"1"}}`), "", 409,
			`Operation cannot be fulfilled on configmaps "a": the object has been modified`},
		{"PUT", a, []byte(big), "", 413, "Request entity too large: limit is 3145728"},
		{"POST", e2eutil.CMPath(ns, ""), []byte(big), "", 413, "Request entity too large: limit is 3145728"},
		{"POST", e2eutil.CMPath(ns, ""), cm("a/b"), "", 422, `ConfigMap "a/b" is invalid: metadata.name`},
		{"POST", e2eutil.CMPath(ns, ""), cm(".."), "", 422, `ConfigMap ".." is invalid: metadata.name`},
		{"PUT", e2eutil.CMPath(ns, ".."), cm(".."), "", 400, `Name parameter invalid: ".."`},
		{"GET", e2eutil.CMPath(ns, ".."), nil, "", 400, `Name parameter invalid: ".."`},
		{"DELETE", e2eutil.CMPath(ns, ".."), nil, "", 400, `Name parameter invalid: ".."`},
		{"PUT", e2eutil.CMPath(ns, "a%2Fb"), cm("a/b"), "", 404, ""},
		{"GET", e2eutil.CMPath("..", ""), nil, "", 400, `Namespace parameter invalid: ".."`},
		// kube's NamespaceLifecycle, which runs before validation, reads
		// the namespace through client-go, which refuses the name: 500
		// (checked against kube-apiserver v1.37.2).
		{"POST", e2eutil.CMPath("..", ""), cm("x"), "", 500, `Internal error occurred: invalid resource name "..": [may not be '..']`},
		{"POST", e2eutil.CMPath("%2E%2E", ""), cm("x"), "", 500, `Internal error occurred: invalid resource name "..": [may not be '..']`},
		{"POST", e2eutil.CMPath("no-such-ns", ""), cm("x"), "", 404, `namespaces "no-such-ns" not found`},
		{"POST", "/api/v1/namespaces", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a.b"}}`), "", 422,
			`Namespace "a.b" is invalid: metadata.name`},
		{"PATCH", a, []byte(`{"data":{"k":1}}`), "application/merge-patch+json", 422, ` "" is invalid: patch: Invalid value: `},
		{"PATCH", a, []byte(`{"data":`), "application/merge-patch+json", 400, ""},
		{"PATCH", a, []byte(`[{"op":"replace","path":"/metadata/name","value":"b"}]`), "application/json-patch+json", 400,
			"the name of the object (b) does not match the name on the URL (a)"},
		{"DELETE", a, []byte(`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":"x"}`), "", 400, ""},
		{"PATCH", a, []byte("[" + strings.Repeat(`{"op":"test","path":"/data/k","value":"v"},`, 10000) + `{"op":"add","path":"/data/k","value":"x"}]`),
			"application/json-patch+json", 413, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"},
	} {
		r := e.Do(t, tt.method, tt.path, tt.body, contentType(tt.contentType)...)
		if r.Code != tt.code {
			t.Errorf("%s %s (%.40q) = %d %.300s, want %d", tt.method, tt.path, tt.body, r.Code, r.Body, tt.code)
			continue
		}
		if s := r.Status(t); !strings.HasPrefix(s.Message, tt.message) || s.Code != int32(tt.code) {
			t.Errorf("%s %s (%.40q): status %d %q, want %d %q...", tt.method, tt.path, tt.body, s.Code, s.Message, tt.code, tt.message)
		}
	}
	after, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "a", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != before.ResourceVersion || after.Data["k"] != "v" {
		t.Fatalf("after bad input: %+v, %v", after, err)
	}
	if now := withoutLoopObjects(e.EtcdKeys(t)); !slices.Equal(now, keys) {
		t.Fatalf("bad input changed the stored keys:\nbefore %q\nafter  %q", keys, now)
	}
	if r := e.Do(t, http.MethodGet, "/healthz", nil); r.Code != 200 || !bytes.Equal(r.Body, []byte("ok")) {
		t.Fatalf("healthz after bad input = %d %s", r.Code, r.Body)
	}
}

// withoutLoopObjects leaves out the keys of what the server's own loops
// write in every namespace (its service account and root CA config map),
// which may appear at any time after a start.
func withoutLoopObjects(keys []string) []string {
	return slices.DeleteFunc(keys, func(k string) bool {
		return strings.HasPrefix(k, "/registry/serviceaccounts/") || strings.HasSuffix(k, "/kube-root-ca.crt")
	})
}

func contentType(ct string) []string {
	if ct == "" {
		return nil
	}
	return []string{"Content-Type", ct}
}
