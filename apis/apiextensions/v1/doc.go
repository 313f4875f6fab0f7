// Package v1 holds the Go types of the apiextensions.k8s.io/v1 API group:
// CustomResourceDefinition, its list and ConversionReview. They are written
// for capstan and match the JSON that kube-apiserver reads and writes for
// this group, field for field.
//
// The OpenAPI definition names are kube's (io.k8s.apiextensions-apiserver...),
// so that clients and server-side apply see the same models they see
// against kube-apiserver.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1
//
// +groupName=apiextensions.k8s.io
package v1
