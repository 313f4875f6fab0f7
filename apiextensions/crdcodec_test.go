package apiextensions

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/capstan-io/capstan/apis/scheme"
)

// kubeStoredCRDs reads the CRDs kube-apiserver v1.37.2 stored, as
// bench/record-kube-etcd.sh recorded them.
func kubeStoredCRDs(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open("../test/e2e/crd/testdata/kube-etcd.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	crds := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		key, b64, _ := strings.Cut(sc.Text(), " ")
		if !strings.Contains(key, "/customresourcedefinitions/") {
			continue
		}
		value, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		crds[key] = value
	}
	if len(crds) == 0 {
		t.Fatal("no CRDs recorded")
	}
	return crds
}

// TestCRDCodecKubeBytes: a CRD kube stored decodes into v1 and encodes back
// to the very bytes kube wrote.
func TestCRDCodecKubeBytes(t *testing.T) {
	c := newCRDCodec()
	for key, kube := range kubeStoredCRDs(t) {
		crd := &apiextv1.CustomResourceDefinition{}
		if _, _, err := c.Decode(kube, nil, crd); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if crd.Spec.Group != "kubeform.example.com" || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil {
			t.Fatalf("%s decoded as %+v", key, crd.Spec)
		}
		var out bytes.Buffer
		if err := c.Encode(crd, &out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), kube) {
			t.Errorf("%s: encoded\n%s\nkube stored\n%s", key, out.Bytes(), kube)
		}
	}
}

// TestCRDCodecReads: what earlier capstans stored (v1 as JSON or protobuf)
// is read; values of other kinds, unknown versions or no format are errors.
func TestCRDCodecReads(t *testing.T) {
	crd := &apiextv1.CustomResourceDefinition{}
	crd.Name, crd.Spec.Group = "foos.example.com", "example.com"
	crd.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}
	v1JSON, err := runtime.Encode(scheme.Codecs.LegacyCodec(apiextv1.SchemeGroupVersion), crd)
	if err != nil {
		t.Fatal(err)
	}
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	v1Proto, err := runtime.Encode(scheme.Codecs.EncoderForVersion(pb, apiextv1.SchemeGroupVersion), crd)
	if err != nil {
		t.Fatal(err)
	}
	c := newCRDCodec()
	for _, tc := range []struct {
		name  string
		value []byte
		err   string
	}{
		{"v1 JSON", v1JSON, ""},
		{"v1 protobuf", v1Proto, ""},
		{"unknown version", bytes.Replace(v1JSON, []byte(`"apiextensions.k8s.io/v1"`), []byte(`"apiextensions.k8s.io/v2"`), 1),
			`no kind "CustomResourceDefinition" is registered for version "apiextensions.k8s.io/v2"`},
		{"another kind", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`), `no kind "ConfigMap" is registered for version "v1"`},
		{"garbage", []byte("k8s\x00garbage"), "proto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &apiextv1.CustomResourceDefinition{}
			_, _, err := c.Decode(tc.value, nil, got)
			if tc.err == "" {
				if err != nil || got.Name != crd.Name || got.Spec.Group != crd.Spec.Group {
					t.Fatalf("decoded %v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
