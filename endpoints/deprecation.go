package endpoints

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/endpoints/handlers"
)

// The API lifecycle methods k8s.io/api's types carry.
type (
	lifecycleDeprecated  interface{ APILifecycleDeprecated() (major, minor int) }
	lifecycleRemoved     interface{ APILifecycleRemoved() (major, minor int) }
	lifecycleReplacement interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// servedMajor and servedMinor are the Kubernetes release whose APIs capstan
// serves: a kind deprecated in it or before is announced as deprecated.
const servedMajor, servedMinor = 1, 37

// deprecationWarning is kube's warning on every request to a deprecated
// kind ("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1
// EndpointSlice"), or "".
func deprecationWarning(s *handlers.Scope) string {
	if s.Storage == nil {
		return ""
	}
	dep, ok := s.Storage.New().(lifecycleDeprecated)
	if !ok {
		return ""
	}
	major, minor := dep.APILifecycleDeprecated()
	if (major == 0 && minor == 0) || major > servedMajor || (major == servedMajor && minor > servedMinor) {
		return ""
	}
	msg := fmt.Sprintf("%s %s is deprecated in v%d.%d+", s.Kind.GroupVersion(), s.Kind.Kind, major, minor)
	if rm, ok := dep.(lifecycleRemoved); ok {
		if major, minor := rm.APILifecycleRemoved(); major != 0 || minor != 0 {
			msg += fmt.Sprintf(", unavailable in v%d.%d+", major, minor)
		}
	}
	if rp, ok := dep.(lifecycleReplacement); ok {
		if gvk := rp.APILifecycleReplacement(); !gvk.Empty() {
			msg += fmt.Sprintf("; use %s %s", gvk.GroupVersion(), gvk.Kind)
		}
	}
	return msg
}
