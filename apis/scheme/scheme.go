// Package scheme holds the Scheme of every built-in type capstan serves and
// the codecs made from it. It is the one process-wide registry of Go types;
// everything else receives it as a value.
package scheme

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/apis/convert"
)

var (
	// Scheme knows every built-in group version of k8s.io/api.
	Scheme = runtime.NewScheme()
	// Codecs serves JSON, YAML and protobuf for Scheme's types. Lists are
	// encoded item by item, as kube does, so that a large list is not
	// marshalled whole before the first byte is written.
	Codecs = serializer.NewCodecFactory(Scheme,
		serializer.WithStreamingCollectionEncodingToJSON(),
		serializer.WithStreamingCollectionEncodingToProtobuf())
	// ParameterCodec decodes query parameters into option structs.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	// apiextensions.k8s.io/v1 (CustomResourceDefinition) is not in
	// k8s.io/api; capstan has its own types for it.
	utilruntime.Must(apiextv1.AddToScheme(Scheme))
	// apiregistration.k8s.io/v1 (APIService) is kube-aggregator's.
	utilruntime.Must(apiregv1.AddToScheme(Scheme))
	// Options types (ListOptions, GetOptions, DeleteOptions...) are decoded
	// from query parameters and bodies in every group version.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	// Clients send DeleteOptions and other options as meta.k8s.io/v1.
	metav1.AddToGroupVersion(Scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(metav1.AddMetaToScheme(Scheme))
	// Clients may still ask for meta.k8s.io/v1beta1 Tables and metadata.
	utilruntime.Must(metav1beta1.AddMetaToScheme(Scheme))
	// events.k8s.io/v1 Events are stored as core/v1 Events.
	utilruntime.Must(convert.AddConversionFuncs(Scheme))
	// autoscaling/v1 HorizontalPodAutoscalers are stored as autoscaling/v2.
	utilruntime.Must(convert.AddHPAConversionFuncs(Scheme))
	// The beta versions --runtime-config turns on are stored as GA objects.
	utilruntime.Must(convert.AddBetaConversionFuncs(Scheme))
}
