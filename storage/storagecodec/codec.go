// Package storagecodec builds the codecs that turn objects into the bytes
// stored in etcd and back, in the formats kube-apiserver writes, so that
// either server reads what the other wrote.
//
// Objects decoded from etcd get their strategy's defaults (WithDefaults).
// JSON values (custom resources, CRDs older capstans wrote) find apiVersion
// and kind by a scan of the top-level keys before the one full decode.
package storagecodec

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
)

// New returns the storage codec of built-in types: it writes protobuf in
// kube's envelope ("k8s\x00" then a runtime.Unknown) at version gv, and
// reads protobuf or JSON (which older or differently configured
// kube-apiservers leave in etcd), converting to gv.
func New(scheme *runtime.Scheme, codecs serializer.CodecFactory, gv schema.GroupVersion) runtime.Codec {
	pb := protobuf.NewSerializer(scheme, scheme)
	return codecs.CodecForVersions(pb, decoder(scheme, pb), gv, gv)
}

// NewJSON returns a storage codec that writes JSON at version gv, for types
// that have no protobuf encoding (custom resources). It reads JSON and
// protobuf like New.
func NewJSON(scheme *runtime.Scheme, codecs serializer.CodecFactory, gv schema.GroupVersion) runtime.Codec {
	pb := protobuf.NewSerializer(scheme, scheme)
	return codecs.CodecForVersions(jsonSerializer(scheme), decoder(scheme, pb), gv, gv)
}

// decoder recognizes the format of stored bytes by their first bytes: the
// protobuf envelope's magic, or a JSON object.
func decoder(scheme *runtime.Scheme, pb *protobuf.Serializer) runtime.Decoder {
	return recognizer.NewDecoder(pb, jsonSerializer(scheme))
}

func jsonSerializer(scheme *runtime.Scheme) *json.Serializer {
	return json.NewSerializerWithOptions(typeMetaFactory{}, scheme, scheme, json.SerializerOptions{})
}
