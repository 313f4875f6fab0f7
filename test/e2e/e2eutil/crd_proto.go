package e2eutil

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	applyv1 "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	pbser "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/apis/scheme"
)

const ProtobufType = "application/vnd.kubernetes.protobuf"

// CRDClient is an apiextensions clientset speaking contentType, and the
// Content-Type of every answer it got.
func (e *Env) CRDClient(t *testing.T, contentType string) (clientset.Interface, *ContentTypes) {
	t.Helper()
	return CRDClientset(t, e.Config, contentType)
}

// CRDClientset is an apiextensions clientset for base's server speaking
// contentType.
func CRDClientset(t *testing.T, base *rest.Config, contentType string) (clientset.Interface, *ContentTypes) {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.ContentType = contentType
	cfg.AcceptContentTypes = contentType
	seen := &ContentTypes{}
	cfg.Wrap(seen.Wrap)
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, seen
}

// WidgetCRD is a namespaced CRD of group proto.example.com with a status
// subresource.
func WidgetCRD(plural string) *apiextv1.CustomResourceDefinition {
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".proto.example.com", Labels: map[string]string{"test": "proto"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "proto.example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"size": {Type: "integer", Default: &apiextv1.JSON{Raw: []byte("1")}}}},
					},
				}},
			}},
		},
	}
}

// PatchCRD patches a label in with each patch type the clientset sends,
// and applies one server-side.
func (e *Env) PatchCRD(t *testing.T, crds crdclient.CustomResourceDefinitionInterface, name string) {
	t.Helper()
	for _, p := range []struct {
		pt   types.PatchType
		body string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"yes"}}}`},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"strategic":"yes"}}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`},
	} {
		if _, err := crds.Patch(Ctx(t), name, p.pt, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s patch: %v", p.pt, err)
		}
	}
	applied, err := crds.Apply(Ctx(t), applyv1.CustomResourceDefinition(name).WithLabels(map[string]string{"applied": "yes"}),
		metav1.ApplyOptions{FieldManager: "e2e", Force: true})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	for _, l := range []string{"merge", "strategic", "json", "applied"} {
		if applied.Labels[l] != "yes" {
			t.Errorf("label %s missing after the patches: %v", l, applied.Labels)
		}
	}
}

// CrdViews reads the CRD as a Table (JSON: meta.k8s.io's Table has no
// protobuf form, so a protobuf Table is refused as kube v1.37.2 refuses it,
// in content negotiation) and as
// PartialObjectMetadata in the given encoding.
func (e *Env) CrdViews(t *testing.T, contentType, name string) {
	t.Helper()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
	table := e.Do(t, http.MethodGet, path, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tb metav1.Table
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), table.Body, &tb); table.Code != 200 || err != nil ||
		len(tb.Rows) != 1 || tb.ColumnDefinitions[0].Name != "Name" {
		t.Fatalf("table = %d %v %.300q", table.Code, err, table.Body)
	}
	if contentType == ProtobufType {
		r := e.Do(t, http.MethodGet, path, nil, "Accept", ProtobufType+";as=Table;v=v1;g=meta.k8s.io")
		r.WantStatus(t, http.StatusNotAcceptable, "NotAcceptable",
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	}
	raw := e.Do(t, http.MethodGet, path, nil, "Accept", contentType+";as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	var one metav1.PartialObjectMetadata
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDeserializer(), raw.Body, &one); raw.Code != 200 || err != nil ||
		one.Name != name || !strings.HasPrefix(raw.Header.Get("Content-Type"), contentType) {
		t.Fatalf("PartialObjectMetadata = %d %s %v %.300q", raw.Code, raw.Header.Get("Content-Type"), err, raw.Body)
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.ContentType = contentType
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pom, err := md.Resource(CRDGVR).Get(Ctx(t), name, metav1.GetOptions{})
	if err != nil || pom.Name != name || pom.Labels["test"] != "proto" {
		t.Fatalf("metadata get = %v, %v", pom, err)
	}
	poms, err := md.Resource(CRDGVR).List(Ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil || len(poms.Items) != 1 {
		t.Fatalf("metadata list = %v, %v", poms, err)
	}
}

// kubeCRDPrefix is how kube-apiserver's stored CRDs begin: JSON at
// apiextensions.k8s.io/v1beta1, the version its apiextensions server
// still stores although it serves only v1.
const kubeCRDPrefix = `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1",`

// WantKubeStoredCRD checks that the CRD named name is stored as
// kube-apiserver stores it, and returns it as kube's types read it.
func (e *Env) WantKubeStoredCRD(t *testing.T, name string) *apiextv1beta1.CustomResourceDefinition {
	t.Helper()
	return WantKubeCRDValue(t, name, e.EtcdValue(t, "/registry/apiextensions.k8s.io/customresourcedefinitions/"+name))
}

func WantKubeCRDValue(t *testing.T, name string, raw []byte) *apiextv1beta1.CustomResourceDefinition {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte(kubeCRDPrefix)) || !bytes.HasSuffix(raw, []byte("}\n")) {
		t.Fatalf("stored CRD %s is not in kube's form: %.100q", name, raw)
	}
	var crd apiextv1beta1.CustomResourceDefinition
	if err := json.Unmarshal(raw, &crd); err != nil || crd.Name != name {
		t.Fatalf("stored CRD = %v, %v", crd.Name, err)
	}
	return &crd
}

func HasCRDCondition(crd *apiextv1.CustomResourceDefinition, typ apiextv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ && c.Status == apiextv1.ConditionTrue {
			return true
		}
	}
	return false
}

func ContainsCRD(list *apiextv1.CustomResourceDefinitionList, name string) bool {
	for _, crd := range list.Items {
		if crd.Name == name {
			return true
		}
	}
	return false
}

func (e *Env) StoredAsV1(t *testing.T, format string) {
	t.Helper()
	crd := WidgetCRD(strings.ToLower(format) + "oldwidgets")
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	crd.UID = types.UID("8a6d2f0e-3b55-4a8e-9d57-2f8e6f1f3c0" + strconv.Itoa(len(format)))
	crd.CreationTimestamp = metav1.Now()
	crd.Spec.Names.Singular = strings.TrimSuffix(crd.Spec.Names.Plural, "s")
	crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
	crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
	// Named and established already, as a running capstan left it: the
	// controllers have nothing to write.
	crd.Status = apiextv1.CustomResourceDefinitionStatus{
		StoredVersions: []string{"v1"}, AcceptedNames: crd.Spec.Names,
		Conditions: []apiextv1.CustomResourceDefinitionCondition{
			{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found",
				LastTransitionTime: crd.CreationTimestamp},
			{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, Reason: "InitialNamesAccepted",
				Message: "the initial names have been accepted", LastTransitionTime: crd.CreationTimestamp},
		},
	}
	var encoder runtime.Encoder = scheme.Codecs.LegacyCodec(apiextv1.SchemeGroupVersion)
	if format == "protobuf" {
		encoder = scheme.Codecs.EncoderForVersion(pbser.NewSerializer(scheme.Scheme, scheme.Scheme), apiextv1.SchemeGroupVersion)
	}
	old, err := runtime.Encode(encoder, crd)
	if err != nil {
		t.Fatal(err)
	}
	key := "/registry/apiextensions.k8s.io/customresourcedefinitions/" + crd.Name
	e.EtcdPut(t, key, old)
	e.Restart(t)

	c, _ := e.CRDClient(t, ProtobufType)
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	var got *apiextv1.CustomResourceDefinition
	Eventually(t, 30*time.Second, format+"-stored CRD established", func(c2 context.Context) (bool, error) {
		got, err = crds.Get(c2, crd.Name, metav1.GetOptions{})
		return err == nil && HasCRDCondition(got, apiextv1.Established), err
	})
	if got.UID != crd.UID || got.Spec.Names.Kind != crd.Spec.Names.Kind {
		t.Fatalf("read back %s %s", got.UID, got.Spec.Names.Kind)
	}
	if list, err := crds.List(Ctx(t), metav1.ListOptions{}); err != nil || !ContainsCRD(list, crd.Name) {
		t.Fatalf("list = %v, %v", list, err)
	}
	if stored := e.EtcdValue(t, key); !bytes.Equal(stored, old) {
		t.Fatalf("reading rewrote the stored CRD: %.60q", stored)
	}
	got.Labels["migrated"] = "yes"
	if _, err := crds.Update(Ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if stored := e.WantKubeStoredCRD(t, crd.Name); stored.UID != crd.UID || stored.Labels["migrated"] != "yes" {
		t.Fatalf("rewritten as %s %v", stored.UID, stored.Labels)
	}
}
