package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"net/http"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	pbser "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/capstan-io/capstan/apis/scheme"
)

// TestCRDBadProtobufBodies: protobuf bodies that are not CRDs are refused
// with kube's 400s, and nothing is stored.
func TestCRDBadProtobufBodies(t *testing.T) {
	e := e2eutil.Start(t)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x.example.com"}}
	configMap, err := runtime.Encode(pbser.NewSerializer(scheme.Scheme, scheme.Scheme), cm)
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.KeysWith(t, "customresourcedefinitions"))
	for _, tc := range []struct {
		name    string
		body    []byte
		message *regexp.Regexp
	}{
		// kube's scheme for the group knows no ConfigMap; capstan's one
		// scheme does, and fails converting it instead.
		{"a ConfigMap", configMap, regexp.MustCompile(`^ConfigMap in version "v1" cannot be handled as a CustomResourceDefinition: `)},
		{"a broken message", []byte("k8s\x00garbage"), regexp.MustCompile(`^the object provided is unrecognized \(must be of type CustomResourceDefinition\): ` +
			`proto: illegal wireType 7 \(6b38730067617262616765\)$`)},
		{"no envelope", []byte("notprotobuf"), regexp.MustCompile(`^the object provided is unrecognized \(must be of type CustomResourceDefinition\): ` +
			`provided data does not appear to be a protobuf message, expected prefix \[107 56 115 0\] \(6e6f7470726f746f627566\)$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(t, http.MethodPost, crdsPath, tc.body, "Content-Type", e2eutil.ProtobufType)
			s := r.WantStatus(t, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
			if !tc.message.MatchString(s.Message) {
				t.Fatalf("message = %q, want %s", s.Message, tc.message)
			}
		})
	}
	if after := len(e.KeysWith(t, "customresourcedefinitions")); after != before {
		t.Fatalf("%d CRD keys after the refusals, %d before", after, before)
	}
}

// TestCRDBadStoredValues: a stored CRD at a version capstan does not know,
// or one that does not decode, is kube's corrupt object: its GET is a 500
// naming the key and the cause, a consistent LIST a 500 StoreReadError
// naming every bad key (kube serves none of that list), and the other CRDs
// are still read. Nothing stored is changed.
func TestCRDBadStoredValues(t *testing.T) {
	e := e2eutil.Start(t)
	c, _ := e.CRDClient(t, e2eutil.ProtobufType)
	good, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(e2eutil.Ctx(t), e2eutil.WidgetCRD("goodwidgets"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "/registry/apiextensions.k8s.io/customresourcedefinitions/"
	bad := map[string][]byte{
		"v2widgets.proto.example.com":   []byte(`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v2","metadata":{"name":"v2widgets.proto.example.com"},"spec":{}}`),
		"junkwidgets.proto.example.com": []byte("k8s\x00junk"),
	}
	for name, value := range bad {
		e.EtcdPut(t, prefix+name, value)
	}
	corrupt := func(key, cause string) string {
		return `StorageError: corrupt object, Code: 7, Key: ` + regexp.QuoteMeta(key) +
			`, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\d+: ` + regexp.QuoteMeta(cause)
	}
	v2Cause := `no kind "CustomResourceDefinition" is registered for version "apiextensions.k8s.io/v2" in scheme "pkg/runtime/scheme.go:111"`
	for name, cause := range map[string]string{"v2widgets.proto.example.com": v2Cause, "junkwidgets.proto.example.com": "unexpected EOF"} {
		r := e.Do(t, http.MethodGet, crdsPath+"/"+name, nil)
		s := r.WantStatus(t, http.StatusInternalServerError, metav1.StatusReasonInternalError, "")
		want := regexp.MustCompile(`^Internal error occurred: ` + corrupt("/apiextensions.k8s.io/customresourcedefinitions/"+name, cause) + `$`)
		if !want.MatchString(s.Message) {
			t.Errorf("GET %s: message = %q\n want %s", name, s.Message, want)
		}
	}
	if r := e.Do(t, http.MethodGet, crdsPath+"/"+good.Name, nil); r.Code != http.StatusOK {
		t.Fatalf("GET of the good CRD = %d %.300s", r.Code, r.Body)
	}
	r := e.Do(t, http.MethodGet, crdsPath, nil)
	s := r.WantStatus(t, http.StatusInternalServerError, metav1.StatusReasonStoreReadError, "")
	want := regexp.MustCompile(`^failed to read one or more customresourcedefinitions.apiextensions.k8s.io from the storage: ` +
		corrupt(prefix+"junkwidgets.proto.example.com", "unexpected EOF") + ` \(and 1 more\)$`)
	if !want.MatchString(s.Message) || s.Details == nil || len(s.Details.Causes) != 2 ||
		s.Details.Causes[0].Field != prefix+"junkwidgets.proto.example.com" || s.Details.Causes[1].Field != prefix+"v2widgets.proto.example.com" {
		t.Fatalf("LIST: %q %+v\n want %s", s.Message, s.Details, want)
	}
	for name, value := range bad {
		if got := e.EtcdValue(t, prefix+name); !bytes.Equal(got, value) {
			t.Errorf("%s changed to %q", name, got)
		}
	}
}
