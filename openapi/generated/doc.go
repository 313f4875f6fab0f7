// Package generated holds the OpenAPI definitions of every type of
// k8s.io/api and of the k8s.io/apimachinery types they use, as kube-openapi's
// openapi-gen writes them. hack/update-openapi.sh regenerates them.
package generated
