// Package safejsonpatch applies JSON patches (RFC 6902) with
// gopkg.in/evanphx/json-patch.v4, the library kube uses, without its
// panics. The library panics on some well-formed patches (a "test" of the
// whole document without a value); patches come from clients, admission
// webhooks and mutating admission policies, none of which may take a
// request down with them.
package safejsonpatch

import (
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Apply applies p to doc. A panic of the library is returned as an error.
func Apply(p jsonpatch.Patch, doc []byte) (patched []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			patched, err = nil, fmt.Errorf("the JSON patch could not be applied: %v", r)
		}
	}()
	return p.Apply(doc)
}
