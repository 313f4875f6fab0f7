package namespacelifecycle

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
)

// namespaces is a getter over three namespaces: "active", "ending"
// (terminating) and "broken" (its read fails); any other is not found.
// It records the names it is asked for.
func namespaces(asked *[]string) NamespaceGetter {
	return func(_ context.Context, name string) (*corev1.Namespace, error) {
		*asked = append(*asked, name)
		switch name {
		case "active":
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, nil
		case "ending":
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, nil
		case "broken":
			return nil, errors.New("etcd is down")
		}
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
}

var (
	configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")
	nsResource = corev1.SchemeGroupVersion.WithResource("namespaces")
	lsars      = authorizationv1.SchemeGroupVersion.WithResource("localsubjectaccessreviews")
)

func configMap(name, generateName string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName}}
}

// TestAdmit: what is refused, with kube's codes and messages, and which
// writes never read a namespace.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a         admission.Attributes
		code      int32 // 0: admitted
		reason    metav1.StatusReason
		message   string
		wantAsked []string
	}{
		{name: "create in an active namespace",
			a:         admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "active", Name: "cm", Object: configMap("cm", "")},
			wantAsked: []string{"active"}},
		{name: "create in a missing namespace",
			a:    admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "gone", Name: "cm", Object: configMap("cm", "")},
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, message: `namespaces "gone" not found`, wantAsked: []string{"gone"}},
		{name: "create when the namespace cannot be read",
			a:    admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "broken", Name: "cm", Object: configMap("cm", "")},
			code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError, message: "Internal error occurred: etcd is down", wantAsked: []string{"broken"}},
		{name: "create in a terminating namespace",
			a:    admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "ending", Name: "cm", Object: configMap("cm", "")},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, wantAsked: []string{"ending"},
			message: `configmaps "cm" is forbidden: unable to create new content in namespace ending because it is being terminated`},
		{name: "generateName in a terminating namespace is named by its prefix",
			a:    admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "ending", Object: configMap("", "web-")},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, wantAsked: []string{"ending"},
			message: `configmaps "web-" is forbidden: unable to create new content in namespace ending because it is being terminated`},
		{name: "a subresource create in a terminating namespace",
			a:    admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: "binding", Namespace: "ending", Name: "p", Object: &corev1.Binding{}},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, wantAsked: []string{"ending"},
			message: `pods "p" is forbidden: unable to create new content in namespace ending because it is being terminated`},
		{name: "a dry run is checked as well",
			a:    admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "gone", Name: "cm", Object: configMap("cm", ""), DryRun: true},
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, message: `namespaces "gone" not found`, wantAsked: []string{"gone"}},
		{name: "update in a terminating namespace",
			a: admission.Attributes{Operation: admission.Update, Resource: configMaps, Namespace: "ending", Name: "cm", Object: configMap("cm", ""), OldObject: configMap("cm", "")}},
		{name: "delete in a missing namespace",
			a: admission.Attributes{Operation: admission.Delete, Resource: configMaps, Namespace: "gone", Name: "cm", OldObject: configMap("cm", "")}},
		{name: "a local access review in a missing namespace",
			a: admission.Attributes{Operation: admission.Create, Resource: lsars, Namespace: "gone", Object: &authorizationv1.LocalSubjectAccessReview{}}},
		{name: "a cluster-scoped create",
			a: admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Name: "n", Object: &corev1.Node{}}},
		{name: "create of a namespace",
			a: admission.Attributes{Operation: admission.Create, Resource: nsResource, Name: "new", Object: &corev1.Namespace{}}},
		{name: "delete of default",
			a:    admission.Attributes{Operation: admission.Delete, Resource: nsResource, Name: "default", OldObject: &corev1.Namespace{}},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: `namespaces "default" is forbidden: this namespace may not be deleted`},
		{name: "delete of kube-system",
			a:    admission.Attributes{Operation: admission.Delete, Resource: nsResource, Name: "kube-system", OldObject: &corev1.Namespace{}},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: `namespaces "kube-system" is forbidden: this namespace may not be deleted`},
		{name: "delete of kube-public",
			a:    admission.Attributes{Operation: admission.Delete, Resource: nsResource, Name: "kube-public", OldObject: &corev1.Namespace{}},
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: `namespaces "kube-public" is forbidden: this namespace may not be deleted`},
		{name: "delete of kube-node-lease",
			a: admission.Attributes{Operation: admission.Delete, Resource: nsResource, Name: "kube-node-lease", OldObject: &corev1.Namespace{}}},
		{name: "delete of another namespace",
			a: admission.Attributes{Operation: admission.Delete, Resource: nsResource, Name: "active", OldObject: &corev1.Namespace{}}},
		{name: "a configmap named default is not a namespace",
			a: admission.Attributes{Operation: admission.Delete, Resource: configMaps, Namespace: "active", Name: "default", OldObject: configMap("default", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			err := New(namespaces(&asked)).Admit(context.Background(), &tc.a)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("Admit = %v, want admitted", err)
				}
			} else {
				var status apierrors.APIStatus
				if !errors.As(err, &status) {
					t.Fatalf("Admit = %v, want a %d", err, tc.code)
				}
				if s := status.Status(); s.Code != tc.code || s.Reason != tc.reason || s.Message != tc.message {
					t.Errorf("Admit = %d %s %q, want %d %s %q", s.Code, s.Reason, s.Message, tc.code, tc.reason, tc.message)
				}
			}
			if !reflect.DeepEqual(asked, tc.wantAsked) {
				t.Errorf("namespaces read %q, want %q", asked, tc.wantAsked)
			}
		})
	}
}

// TestTerminatingCause: kube's refusal in a terminating namespace carries
// the NamespaceTerminating cause clients look for.
func TestTerminatingCause(t *testing.T) {
	var asked []string
	err := New(namespaces(&asked)).Admit(context.Background(), &admission.Attributes{
		Operation: admission.Create, Resource: configMaps, Namespace: "ending", Name: "cm", Object: configMap("cm", "")})
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Details == nil {
		t.Fatalf("Admit = %v, want a Status with details", err)
	}
	want := &metav1.StatusDetails{Name: "cm", Kind: "configmaps", Causes: []metav1.StatusCause{{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace ending is being terminated", Field: "metadata.namespace"}}}
	if !reflect.DeepEqual(status.ErrStatus.Details, want) {
		t.Errorf("details %+v, want %+v", status.ErrStatus.Details, want)
	}
}

// TestIsMutating: the plugin runs in the mutating phase, as kube's, so
// that a write into a missing namespace is refused before the plugins
// after it (ServiceAccount, webhooks) look into that namespace.
func TestIsMutating(t *testing.T) {
	var p any = New(nil)
	if _, ok := p.(admission.Mutator); !ok {
		t.Error("NamespaceLifecycle is not a Mutator")
	}
	if _, ok := p.(admission.Validator); ok {
		t.Error("NamespaceLifecycle is a Validator too: it would read the namespace twice")
	}
}
