package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"reflect"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

// TestListDefaultsOnRead: objects an older server left in etcd without
// today's defaults are served defaulted by lists as by gets, item for
// item: services (clusterIPs, ipFamilies and ipFamilyPolicy completed, an
// ExternalName service's internalTrafficPolicy hidden) and deployments
// (the strategy's defaults). Lists share the watch cache's objects, so
// concurrent lists also check, under -race, that no read writes into
// them.
func TestListDefaultsOnRead(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	local := corev1.ServiceInternalTrafficPolicyLocal
	old := []struct {
		key string
		gv  schema.GroupVersion
		obj runtime.Object
	}{
		{"/registry/services/specs/" + ns + "/plain", corev1.SchemeGroupVersion, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns, UID: "1"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.77",
				Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}, Selector: map[string]string{"app": "a"}}}},
		{"/registry/services/specs/" + ns + "/external", corev1.SchemeGroupVersion, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "external", Namespace: ns, UID: "2"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", InternalTrafficPolicy: &local}}},
		{"/registry/deployments/" + ns + "/bare", appsv1.SchemeGroupVersion, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns, UID: "3"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}},
	}
	for _, o := range old {
		var buf bytes.Buffer
		if err := storagecodec.New(scheme.Scheme, scheme.Codecs, o.gv).Encode(o.obj, &buf); err != nil {
			t.Fatal(err)
		}
		e.EtcdPut(t, o.key, buf.Bytes())
	}

	services := "/api/v1/namespaces/" + ns + "/services"
	deployments := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	for _, rv := range []string{"", "0"} {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { e.SameAsGets(t, services, rv, 2) })
		}
		wg.Wait()
		items := e.SameAsGets(t, deployments, rv, 1)
		if items[0]["spec"].(map[string]any)["revisionHistoryLimit"] != float64(10) {
			t.Fatalf("list at rv %q: the deployment is not defaulted: %v", rv, items[0]["spec"])
		}
	}
	svcs := e.SameAsGets(t, services, "", 2)
	if spec := svcs[0]["spec"].(map[string]any); spec["internalTrafficPolicy"] != nil {
		t.Fatalf("the ExternalName service lists internalTrafficPolicy %v", spec["internalTrafficPolicy"])
	}
	spec := svcs[1]["spec"].(map[string]any)
	if !reflect.DeepEqual(spec["ipFamilies"], []any{"IPv4"}) || spec["ipFamilyPolicy"] != "SingleStack" ||
		!reflect.DeepEqual(spec["clusterIPs"], []any{"10.0.0.77"}) {
		t.Fatalf("the ClusterIP service is not completed: %v", spec)
	}
}
