package namespaceexists

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
)

// namespaces is a getter knowing "active"; "broken" cannot be read and
// any other is not found. It records what it is asked.
func namespaces(asked *[]string) Getter {
	return func(_ context.Context, name string) (*corev1.Namespace, error) {
		*asked = append(*asked, name)
		switch name {
		case "active":
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
		case "broken":
			return nil, errors.New("etcd is down")
		}
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
}

func write(op admission.Operation, ns string) *admission.Attributes {
	return &admission.Attributes{Operation: op, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns, Name: "cm", Object: &corev1.ConfigMap{}}
}

var namespaceWrite = &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("Namespace"),
	Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Namespace: "gone", Name: "gone", Object: &corev1.Namespace{}}

// wantStatus checks err is an API status of code and message.
func wantStatus(t *testing.T, err error, code int32, message string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != code || status.Status().Message != message {
		t.Errorf("error %v, want %d %q", err, code, message)
	}
}

// TestExists: writes into a missing namespace are its 404; namespaces
// themselves and cluster-scoped writes read none.
func TestExists(t *testing.T) {
	var asked []string
	p := NewExists(namespaces(&asked))
	ctx := context.Background()
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete} {
		if err := p.Validate(ctx, write(op, "active")); err != nil {
			t.Errorf("%s in an existing namespace: %v", op, err)
		}
		wantStatus(t, p.Validate(ctx, write(op, "gone")), http.StatusNotFound, `namespaces "gone" not found`)
	}
	wantStatus(t, p.Validate(ctx, write(admission.Create, "broken")), http.StatusInternalServerError, "Internal error occurred: etcd is down")
	if want := []string{"active", "gone", "active", "gone", "active", "gone", "broken"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	asked = nil
	if err := p.Validate(ctx, write(admission.Create, "")); err != nil {
		t.Errorf("a cluster-scoped write: %v", err)
	}
	if err := p.Validate(ctx, namespaceWrite); err != nil {
		t.Errorf("a namespace: %v", err)
	}
	if asked != nil {
		t.Errorf("namespaces read for writes that have none: %q", asked)
	}
	if !p.Handles(admission.Create) || !p.Handles(admission.Update) || !p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates, updates and deletes")
	}
}

// TestAutoProvision: a create into a missing namespace creates it first,
// not on a dry run; failures are kube's 403.
func TestAutoProvision(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a         *admission.Attributes
		createErr error
		created   []string
		code      int32
		message   string
	}{
		{name: "existing namespace", a: write(admission.Create, "active")},
		{name: "missing namespace", a: write(admission.Create, "gone"), created: []string{"gone"}},
		{name: "created meanwhile", a: write(admission.Create, "gone"), created: []string{"gone"},
			createErr: apierrors.NewAlreadyExists(corev1.Resource("namespaces"), "gone")},
		{name: "create fails", a: write(admission.Create, "gone"), created: []string{"gone"}, createErr: errors.New("quota exceeded"),
			code: http.StatusForbidden, message: `configmaps "cm" is forbidden: quota exceeded`},
		{name: "namespace cannot be read", a: write(admission.Create, "broken"),
			code: http.StatusForbidden, message: `configmaps "cm" is forbidden: etcd is down`},
		{name: "dry run", a: func() *admission.Attributes { a := write(admission.Create, "gone"); a.DryRun = true; return a }()},
		{name: "cluster-scoped", a: write(admission.Create, "")},
		{name: "a namespace", a: namespaceWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked, created []string
			p := NewAutoProvision(namespaces(&asked), func(_ context.Context, name string) error {
				created = append(created, name)
				return tc.createErr
			})
			err := p.Admit(context.Background(), tc.a)
			if tc.code == 0 && err != nil {
				t.Errorf("Admit = %v", err)
			}
			if tc.code != 0 {
				wantStatus(t, err, tc.code, tc.message)
			}
			if !reflect.DeepEqual(created, tc.created) {
				t.Errorf("created %q, want %q", created, tc.created)
			}
		})
	}
	p := NewAutoProvision(nil, nil)
	if !p.Handles(admission.Create) || p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates only")
	}
}
