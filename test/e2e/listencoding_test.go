package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/scheme"
)

// TestListEncoding: a list of the watch cache's objects, which the server
// writes item by item (gzipped past 128 KB), is byte for byte the codec's
// encoding of the whole list, in JSON and protobuf, with managed fields,
// timestamps and escaped characters in the objects.
func TestListEncoding(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	data := map[string]string{"html": "<b>&</b>", "unicode": "héllo \u2028 ☃", "big": strings.Repeat("x", 4096)}
	for i := range 40 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Sprintf("cm-%02d", i), Labels: map[string]string{"i": e2eutil.Sprintf("%d", i)}},
			Data: data, BinaryData: map[string][]byte{"bin": {0, 255}}}
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, media := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		r := e.Do(t, http.MethodGet, e2eutil.CMPath(ns, ""), nil, "Accept", media)
		if r.Code != http.StatusOK {
			t.Fatalf("list as %s = %d: %s", media, r.Code, r.Body)
		}
		info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), media)
		var list corev1.ConfigMapList
		if _, _, err := scheme.Codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion).Decode(r.Body, nil, &list); err != nil {
			t.Fatalf("decoding the list as %s: %v", media, err)
		}
		if len(list.Items) != 40 || len(list.Items[0].ManagedFields) == 0 {
			t.Fatalf("list as %s: %d items, managed fields %v", media, len(list.Items), list.Items[0].ManagedFields)
		}
		var want bytes.Buffer
		if err := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(&list, &want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Body, want.Bytes()) {
			t.Errorf("list as %s is not the codec's encoding of the list it holds:\n got %.300q\nwant %.300q", media, r.Body, want.Bytes())
		}
	}
}
