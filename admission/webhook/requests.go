package webhook

import (
	"context"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authz"
)

// requests are what the webhooks of one admission are sent: the write as
// requested, and its conversions to the other versions webhooks with
// matchPolicy Equivalent registered for, each made once.
type requests struct {
	base   *request
	authz  authz.Authorizer
	others map[admission.Version]*request
}

func newRequests(ctx context.Context, a *admission.Attributes, az authz.Authorizer) (*requests, error) {
	base, err := newRequest(ctx, a, az)
	if err != nil {
		return nil, err
	}
	return &requests{base: base, authz: az}, nil
}

// at is the request of the write at version v of its resource.
func (rs *requests) at(ctx context.Context, v admission.Version) (*request, error) {
	a := rs.base.attrs
	if v.Kind == a.Kind && v.Resource == a.Resource {
		return rs.base, nil
	}
	if r := rs.others[v]; r != nil {
		return r, nil
	}
	va, err := a.AsVersion(ctx, v)
	if err != nil {
		return nil, err
	}
	r, err := newRequest(ctx, va, rs.authz)
	if err != nil {
		return nil, err
	}
	if rs.others == nil {
		rs.others = map[admission.Version]*request{}
	}
	rs.others[v] = r
	return r, nil
}

// changed encodes the write's object again after a mutating webhook
// replaced it, drops the conversions of the old one, and reports whether
// the object changed.
func (rs *requests) changed() (bool, error) {
	b := rs.base
	before := b.object
	var err error
	if b.object, err = encodeObject(b.attrs.Object, b.attrs.Kind); err != nil {
		return false, err
	}
	b.vars, rs.others = nil, nil
	return string(before) != string(b.object), nil
}
