// Package always is kube's AlwaysAdmit and AlwaysDeny plugins: one admits
// every write, the other refuses every write (both deprecated in kube,
// kept because clusters and test environments still name them).
package always

import (
	"context"
	"errors"

	"github.com/capstan-io/capstan/admission"
)

// Admit admits everything: it adds nothing to the chain's answer.
type Admit struct{}

// Admit lets the write through.
func (Admit) Admit(context.Context, *admission.Attributes) error { return nil }

// Deny refuses every write with kube's 403.
type Deny struct{}

var errDeny = errors.New("admission control is denying all modifications")

// Admit refuses the write.
func (Deny) Admit(_ context.Context, a *admission.Attributes) error {
	return admission.NewForbidden(a, errDeny)
}

// Validate refuses the write.
func (Deny) Validate(_ context.Context, a *admission.Attributes) error {
	return admission.NewForbidden(a, errDeny)
}
