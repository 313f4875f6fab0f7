package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// TestProtobufClient: client-go speaks protobuf for requests, responses and
// watch streams.
func TestProtobufClient(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	types := &requestLog{}
	c := e.ClientWith(t, func(cfg *rest.Config) {
		cfg.ContentType, cfg.AcceptContentTypes = protobuf, protobuf
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return e2eutil.RoundTripperFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := rt.RoundTrip(r)
				if err == nil {
					types.add(r.Header.Get("Content-Type") + " -> " + resp.Header.Get("Content-Type"))
				}
				return resp, err
			})
		})
	})
	cms := c.CoreV1().ConfigMaps(ns)
	w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {0, 1, 2}}}
	created, err := cms.Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{})
	if err != nil || created.Data["k"] != "v" || !bytes.Equal(created.BinaryData["b"], []byte{0, 1, 2}) {
		t.Fatalf("protobuf create = %+v, %v", created, err)
	}
	if list, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{}); err != nil || names(list.Items) != "p" {
		t.Fatalf("protobuf list = %v, %v", list, err)
	}
	wantEvent(t, w, watch.Added, "p", created.ResourceVersion)
	want := []string{
		" -> " + protobuf + ";stream=watch",
		protobuf + " -> " + protobuf,
		" -> " + protobuf,
	}
	if got := types.list(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("content types (request -> response):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A raw protobuf body.
	body, err := runtime.Encode(scheme.Codecs.EncoderForVersion(protobufSerializer(t), corev1.SchemeGroupVersion),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "raw"}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Do(t, http.MethodPost, e2eutil.CMPath(ns, ""), body, "Content-Type", protobuf, "Accept", "application/json")
	if r.Code != 201 || !strings.Contains(string(r.Body), `"name":"raw"`) {
		t.Fatalf("protobuf body = %d %s", r.Code, r.Body)
	}
}

func protobufSerializer(t *testing.T) runtime.Serializer {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), protobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	return info.Serializer
}

func TestYAMLAndJSON(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	yamlBody := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n"
	r := e.Do(t, http.MethodPost, e2eutil.CMPath(ns, ""), []byte(yamlBody), "Content-Type", "application/yaml", "Accept", "application/yaml")
	if r.Code != 201 || r.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("YAML create = %d %s %s", r.Code, r.Header.Get("Content-Type"), r.Body)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(r.Body, &cm); err != nil || cm.Name != "from-yaml" || cm.Data["k"] != "v" || cm.Kind != "ConfigMap" {
		t.Fatalf("YAML answer = %s (%v)", r.Body, err)
	}
	r = e.Do(t, http.MethodGet, e2eutil.CMPath(ns, ""), nil, "Accept", "application/yaml")
	if r.Code != 200 || !strings.HasPrefix(string(r.Body), "apiVersion: v1\nitems:\n") || !strings.Contains(string(r.Body), "kind: ConfigMapList") {
		t.Fatalf("YAML list = %d %s", r.Code, r.Body)
	}
	e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "nope"), nil, "Accept", "application/yaml").
		WantStatus(t, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`)
	// A watch has no YAML stream.
	e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "")+"?watch=true", nil, "Accept", "application/yaml").
		WantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")
	// A media type the server does not have at all gets kube's router's 406.
	e.Do(t, http.MethodGet, e2eutil.CMPath(ns, ""), nil, "Accept", "application/xml").WantStatus(t, 406, metav1.StatusReasonNotAcceptable,
		"406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	// A JSON watch stream is newline-delimited WatchEvents.
	lines := watchLinesAs(t, e, e2eutil.CMPath(ns, "")+"?watch=true&timeoutSeconds=1", "application/json", 1)
	var ev metav1.WatchEvent
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.Type != "ADDED" || !strings.Contains(string(ev.Object.Raw), `"name":"from-yaml"`) {
		t.Fatalf("JSON watch line = %s (%v)", lines[0], err)
	}
}

// watchLinesAs reads n lines of a JSON watch and checks its Content-Type.
func watchLinesAs(t *testing.T, e *e2eutil.Env, path, accept string, n int) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(e2eutil.Ctx(t), http.MethodGet, e.URL+path, nil)
	req.Header.Set("Accept", accept)
	resp, err := e.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("watch = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for len(lines) < n && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < n {
		t.Fatalf("watch ended after %d lines: %v", len(lines), sc.Err())
	}
	return lines
}

func TestGzip(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	big := strings.Repeat("x", 8*1024)
	for i := range 20 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Sprintf("big-%d", i)}, Data: map[string]string{"k": big}}
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Several times: the server reuses its compressors.
	for range 3 {
		func() {
			r := e.Do(t, http.MethodGet, e2eutil.CMPath(ns, ""), nil, "Accept-Encoding", "gzip")
			if r.Code != 200 || r.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("large list = %d, Content-Encoding %q", r.Code, r.Header.Get("Content-Encoding"))
				return
			}
			zr, err := gzip.NewReader(bytes.NewReader(r.Body))
			if err != nil {
				t.Error(err)
				return
			}
			plain, err := io.ReadAll(zr)
			var list corev1.ConfigMapList
			if err != nil || json.Unmarshal(plain, &list) != nil || len(list.Items) != 20 || len(plain) < 160*1024 {
				t.Errorf("gunzipped list: %d bytes, %d items, %v", len(plain), len(list.Items), err)
				return
			}
			for _, cm := range list.Items {
				if cm.Data["k"] != big {
					t.Errorf("gunzipped list: %s has %d bytes of data, want %d", cm.Name, len(cm.Data["k"]), len(big))
				}
			}
		}()
	}
	if r := e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "big-0"), nil, "Accept-Encoding", "gzip"); r.Header.Get("Content-Encoding") != "" {
		t.Fatalf("a small answer is gzipped")
	}
}
