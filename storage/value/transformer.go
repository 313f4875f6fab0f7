// Package value transforms the bytes of stored objects on their way to
// and from etcd: encryption at rest. A Transformer works below the codec,
// on the encoded object, with the object's etcd key as authenticated data,
// so that the values stay interchangeable with kube-apiserver's.
package value

import (
	"bytes"
	"context"
	"errors"
)

// Transformer turns stored bytes into the bytes of an encoded object and
// back. additionalData is the full etcd key of the value: ciphers that
// authenticate it bind a value to its key, so that a value copied to
// another key does not decrypt.
type Transformer interface {
	// TransformFromStorage returns the plain bytes of data. stale reports
	// that data was not written by the current write path (an older key or
	// provider): the next write of the object must rewrite it even if
	// nothing else changed.
	TransformFromStorage(ctx context.Context, data, additionalData []byte) (out []byte, stale bool, err error)
	// TransformToStorage returns the bytes to store for data.
	TransformToStorage(ctx context.Context, data, additionalData []byte) ([]byte, error)
}

// Prefixed is a transformer whose values start with Prefix.
type Prefixed struct {
	Prefix      []byte
	Transformer Transformer
}

// prefixUnion writes with its first transformer and reads with the first
// whose prefix the value has.
type prefixUnion struct {
	transformers []Prefixed
	noMatch      error
}

// NewPrefixUnion returns a transformer that writes with transformers[0],
// prefixing its output, and reads a value with the first transformer whose
// prefix it starts with. A value read by any but the first is stale. A
// transformer with an empty prefix (identity) that fails is passed over, as
// in kube, so that its refusal of encrypted data does not hide the
// noMatch error. transformers must not be empty.
func NewPrefixUnion(noMatch error, transformers ...Prefixed) Transformer {
	if noMatch == nil {
		noMatch = errors.New("the provided value does not match any of the supported transformers")
	}
	return &prefixUnion{transformers: transformers, noMatch: noMatch}
}

func (u *prefixUnion) TransformFromStorage(ctx context.Context, data, ad []byte) ([]byte, bool, error) {
	var errs []error
	for i, t := range u.transformers {
		if !bytes.HasPrefix(data, t.Prefix) {
			continue
		}
		out, stale, err := t.Transformer.TransformFromStorage(ctx, data[len(t.Prefix):], ad)
		if err != nil {
			if len(t.Prefix) > 0 {
				errs = append(errs, err)
			}
			continue
		}
		return out, stale || i != 0, nil
	}
	switch len(errs) {
	case 0:
		return nil, false, u.noMatch
	case 1:
		return nil, false, errs[0]
	}
	return nil, false, joinErrors(errs)
}

func (u *prefixUnion) TransformToStorage(ctx context.Context, data, ad []byte) ([]byte, error) {
	first := u.transformers[0]
	out, err := first.Transformer.TransformToStorage(ctx, data, ad)
	if err != nil {
		return nil, err
	}
	prefixed := make([]byte, 0, len(first.Prefix)+len(out))
	prefixed = append(prefixed, first.Prefix...)
	return append(prefixed, out...), nil
}

// joinErrors formats several errors as apimachinery's aggregate does:
// "[err1, err2]", the form kube's messages show.
func joinErrors(errs []error) error {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, err := range errs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(err.Error())
	}
	b.WriteByte(']')
	return &aggregate{msg: b.String(), errs: errs}
}

type aggregate struct {
	msg  string
	errs []error
}

func (a *aggregate) Error() string   { return a.msg }
func (a *aggregate) Unwrap() []error { return a.errs }
