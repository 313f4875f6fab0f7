package authz

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capstan-io/capstan/authn"
)

// The values of --authorization-mode, as kube-apiserver spells them.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeABAC        = "ABAC"
	ModeWebhook     = "Webhook"
	ModeRBAC        = "RBAC"
	ModeNode        = "Node"
)

// ModeChoices are the modes kube-apiserver knows, in the order its help
// lists them.
var ModeChoices = []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeABAC, ModeWebhook, ModeRBAC, ModeNode}

// PrivilegedGroupAuthorizerName names the authorizer that lets
// system:masters do anything, ahead of the configured modes.
const PrivilegedGroupAuthorizerName = "kubernetes.io/system-privileged-group"

// ValidateModes reports what is wrong with a --authorization-mode list:
// none given, a mode kube does not know, or one given twice.
func ValidateModes(modes []string) error {
	if len(modes) == 0 {
		return errors.New("at least one authorization-mode must be passed")
	}
	var errs []error
	for _, m := range modes {
		switch {
		case !slices.Contains(ModeChoices, m):
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode", m))
		}
	}
	seen := map[string]bool{}
	for _, m := range modes {
		if seen[m] {
			errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", modes))
			break
		}
		seen[m] = true
	}
	return errors.Join(errs...)
}

// ModeAuthorizers are the authorizers of the modes that are more than a
// constant.
type ModeAuthorizers struct {
	RBAC, Node, ABAC, Webhook Authorizer
}

// ForModes is kube's authorizer for a --authorization-mode list: the
// privileged-group authorizer (system:masters may do anything), then each
// mode in the order given, each named as kube names it in reasons
// ("rbac", "alwaysdeny").
func ForModes(modes []string, m ModeAuthorizers) (Authorizer, error) {
	if err := ValidateModes(modes); err != nil {
		return nil, err
	}
	var chain []Named
	for _, mode := range modes {
		a, err := m.authorizer(mode)
		if err != nil {
			return nil, err
		}
		chain = append(chain, Named{Name: strings.ToLower(mode), Authorizer: a})
	}
	return Chain(chain...), nil
}

// Chain is kube's authorizer chain: the privileged-group authorizer
// (system:masters may do anything), then as in order.
func Chain(as ...Named) Authorizer {
	chain := []Named{{Name: PrivilegedGroupAuthorizerName, Authorizer: PrivilegedGroups(authn.SystemPrivilegedGroup)}}
	return Union(append(chain, as...)...)
}

// Constant is the authorizer of AlwaysAllow or AlwaysDeny, else nil.
func Constant(mode string) Authorizer {
	switch mode {
	case ModeAlwaysAllow:
		return allowAll{}
	case ModeAlwaysDeny:
		return denyAll{}
	}
	return nil
}

func (m ModeAuthorizers) authorizer(mode string) (Authorizer, error) {
	switch mode {
	case ModeAlwaysAllow:
		return allowAll{}, nil
	case ModeAlwaysDeny:
		return denyAll{}, nil
	case ModeRBAC:
		if m.RBAC == nil {
			return nil, errors.New("authorization-mode RBAC needs an RBAC authorizer")
		}
		return m.RBAC, nil
	case ModeNode:
		if m.Node == nil {
			return nil, errors.New("authorization-mode Node needs a Node authorizer")
		}
		return m.Node, nil
	case ModeABAC:
		if m.ABAC == nil {
			return nil, errors.New("authorization-mode ABAC needs an ABAC authorizer")
		}
		return m.ABAC, nil
	case ModeWebhook:
		if m.Webhook == nil {
			return nil, errors.New("authorization-mode Webhook needs a Webhook authorizer")
		}
		return m.Webhook, nil
	}
	return nil, fmt.Errorf("authorization-mode %q is not supported by capstan yet", mode)
}
