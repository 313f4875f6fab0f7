// Package generated holds the OpenAPI definitions of the k8s.io/api group
// versions capstan serves and of the k8s.io/apimachinery types they use, as
// kube-openapi's openapi-gen writes them. hack/update-openapi.sh regenerates
// them.
package generated
