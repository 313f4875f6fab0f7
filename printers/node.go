package printers

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var nodeConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	nodev1.SchemeGroupVersion.WithKind("RuntimeClass"): New(runtimeClassColumns, runtimeClassRow),
}

// runtimeClassColumns describe Handler with an ObjectMeta field that does
// not exist, so with nothing, as kube's do.
var runtimeClassColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Handler", "string", objectMetaDoc["handler"]),
	ageColumn(),
}

func runtimeClassRow(rc *nodev1.RuntimeClass, now time.Time) (metav1.TableRow, error) {
	return rowOf(rc.Name, rc.Handler, since(rc.CreationTimestamp, now))
}
