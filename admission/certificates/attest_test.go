package certificates

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
)

// TestAttest: the attest verb on the bundle's signer (or its domain's
// wildcard) is needed to write a bundle naming a signer; bundles without
// one, and updates of only the garbage collector's fields, need nothing.
func TestAttest(t *testing.T) {
	// alice may attest for example.com/a; bob for every example.com signer.
	az := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		i := a.Info
		ok := i.Verb == "attest" && i.Resource == "signers" && i.APIGroup == "certificates.k8s.io" &&
			(a.User.Name == "alice" && i.Name == "example.com/a" || a.User.Name == "bob" && i.Name == "example.com/*")
		if ok {
			return authz.Allow, "", nil
		}
		return authz.NoOpinion, "", nil
	})
	bundle := func(signer string, owners ...metav1.OwnerReference) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b", OwnerReferences: owners},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: "pem"}}
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}
	for _, tc := range []struct {
		name, user string
		op         admission.Operation
		obj, old   *certificatesv1.ClusterTrustBundle
		refused    bool
	}{
		{name: "no signer", user: "eve", op: admission.Create, obj: bundle("")},
		{name: "signer allowed", user: "alice", op: admission.Create, obj: bundle("example.com/a")},
		{name: "domain wildcard", user: "bob", op: admission.Create, obj: bundle("example.com/b")},
		{name: "other signer", user: "alice", op: admission.Create, obj: bundle("example.com/b"), refused: true},
		{name: "no permission", user: "eve", op: admission.Create, obj: bundle("example.com/a"), refused: true},
		{name: "update by nobody", user: "eve", op: admission.Update, obj: bundle("example.com/a"), old: newPEM(bundle("example.com/a")), refused: true},
		{name: "only owners change", user: "eve", op: admission.Update, obj: bundle("example.com/a", owner), old: bundle("example.com/a")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles"),
				Name: "b", Object: tc.obj}
			if tc.old != nil {
				a.OldObject = tc.old
			}
			ctx := authn.WithUser(context.Background(), &authn.User{Name: tc.user})
			err := NewAttest(az).Validate(ctx, a)
			switch {
			case !tc.refused && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused && !apierrors.IsForbidden(err):
				t.Fatalf("error %v, want 403", err)
			case tc.refused && err.Error() != `clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "`+tc.obj.Spec.SignerName+`"`:
				t.Fatalf("message %q", err)
			}
		})
	}
}

func newPEM(b *certificatesv1.ClusterTrustBundle) *certificatesv1.ClusterTrustBundle {
	b.Spec.TrustBundle = "other pem"
	return b
}
