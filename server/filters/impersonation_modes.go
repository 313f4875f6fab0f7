package filters

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/lru"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// impersonationMode is one of kube's ways to allow an impersonation.
type impersonationMode struct {
	// name is the constrained mode (user-info...), "" for legacy.
	name string
	// applies says whether the mode can allow wanted for requestor at all;
	// one that does not is skipped without a check.
	applies func(wanted *impersonation, requestor *authn.User) bool
	// rewrite, if set, changes what every check of the mode asks the
	// authorizer (and what its denials name).
	rewrite func(authz.Attributes) authz.Attributes
}

// verb is the verb the mode checks on the impersonated user's parts.
func (m *impersonationMode) verb() string {
	if m.name == "" {
		return "impersonate"
	}
	return "impersonate:" + m.name
}

// impersonationModes tries kube's modes in kube's order, starting with the
// one that last allowed the same requestor: that one's denial is then the
// one reported, as in kube.
type impersonationModes struct {
	a     authz.Authorizer
	modes []*impersonationMode
	last  *lru.Cache // requestor name -> index of the mode that last allowed it
}

// lastModes is how many requestors' last modes are remembered, kube's
// number.
const lastModes = 10_000

func newImpersonationModes(a authz.Authorizer) *impersonationModes {
	return &impersonationModes{a: a, last: lru.New(lastModes), modes: []*impersonationMode{
		{name: "associated-node", applies: ownNode, rewrite: asAnyOwnNode},
		{name: "arbitrary-node", applies: func(w *impersonation, _ *authn.User) bool {
			_, ok := nodeOf(w.name)
			return ok && w.onlyName()
		}},
		{name: "serviceaccount", applies: func(w *impersonation, _ *authn.User) bool {
			_, _, ok := authn.SplitServiceAccountUsername(w.name)
			return ok && w.onlyName()
		}},
		{name: "user-info", applies: func(w *impersonation, _ *authn.User) bool {
			_, node := nodeOf(w.name)
			_, _, sa := authn.SplitServiceAccountUsername(w.name)
			return !node && !sa
		}},
		{applies: func(*impersonation, *authn.User) bool { return true }},
	}}
}

// impersonate returns the user the request proceeds as and the verb of
// the constrained mode that allowed it ("" for legacy), or kube's 403 (the
// first mode's denial).
func (ms *impersonationModes) impersonate(ctx context.Context, wanted *impersonation, req authz.Attributes) (*authn.User, string, error) {
	var first error
	try := func(i int) *authn.User {
		u, err := ms.check(ctx, ms.modes[i], wanted, req)
		if err != nil && first == nil {
			first = err
		}
		if u != nil {
			ms.last.Add(req.User.Name, i)
		}
		return u
	}
	last, seen := ms.last.Get(req.User.Name)
	if seen {
		if u := try(last.(int)); u != nil {
			return u, ms.modes[last.(int)].constraint(), nil
		}
	}
	for i := range ms.modes {
		if seen && i == last.(int) {
			continue
		}
		if u := try(i); u != nil {
			return u, ms.modes[i].constraint(), nil
		}
	}
	if first == nil {
		first = fmt.Errorf("all impersonation modes failed")
	}
	return nil, "", first
}

func (m *impersonationMode) constraint() string {
	if m.name == "" {
		return ""
	}
	return m.verb()
}

// check runs one mode: nil, nil if it does not apply.
func (ms *impersonationModes) check(ctx context.Context, m *impersonationMode, wanted *impersonation, req authz.Attributes) (*authn.User, error) {
	if !m.applies(wanted, req.User) {
		return nil, nil
	}
	c := modeCheck{ctx: ctx, a: ms.a, m: m, requestor: req.User}
	if m.name != "" {
		// May the requestor do this request's verb in this mode?
		on := *req.Info
		on.Verb = "impersonate-on:" + m.name + ":" + req.Info.Verb
		if err := c.authorize(authz.Attributes{User: req.User, Info: &on}); err != nil {
			return nil, err
		}
	}
	return c.user(wanted)
}

// modeCheck checks the parts of an impersonated user in one mode.
type modeCheck struct {
	ctx       context.Context
	a         authz.Authorizer
	m         *impersonationMode
	requestor *authn.User
}

func (c *modeCheck) constrained() bool { return c.m.name != "" }

// part is the attributes of the check of one impersonated part: the legacy
// mode asks about users and groups in the core group, the constrained
// ones in authentication.k8s.io; uids and extras are always there.
func (c *modeCheck) part(resource, name string) *request.Info {
	info := &request.Info{IsResourceRequest: true, Verb: c.m.verb(), APIGroup: authenticationv1.GroupName, APIVersion: "v1", Resource: resource, Name: name}
	if !c.constrained() && (resource == "users" || resource == "groups" || resource == "serviceaccounts") {
		info.APIGroup = ""
	}
	return info
}

// authorize asks the authorizer about a (rewritten by the mode) and
// returns kube's 403 if it does not allow it.
func (c *modeCheck) authorize(a authz.Attributes) error {
	if c.m.rewrite != nil {
		a = c.m.rewrite(a)
	}
	d, reason, err := c.a.Authorize(c.ctx, a)
	if d == authz.Allow {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return err
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	return authz.Forbidden(a, msg)
}

// forbidden is a 403 about info without asking the authorizer (so not
// rewritten by the mode, as in kube).
func (c *modeCheck) forbidden(info *request.Info, msg string) error {
	return authz.Forbidden(authz.Attributes{User: c.requestor, Info: info}, msg)
}

// user checks every part of wanted and returns the user it makes.
func (c *modeCheck) user(wanted *impersonation) (*authn.User, error) {
	u := &authn.User{Name: wanted.name, UID: wanted.uid, Groups: wanted.groups, Extra: wanted.extra}
	if err := c.checkName(wanted, u); err != nil {
		return nil, err
	}
	if wanted.uid != "" {
		if err := c.authorize(authz.Attributes{User: c.requestor, Info: c.part("uids", wanted.uid)}); err != nil {
			return nil, err
		}
	}
	if err := c.checkGroups(wanted.groups); err != nil {
		return nil, err
	}
	if err := c.checkExtra(wanted.extra); err != nil {
		return nil, err
	}
	switch {
	case u.Name == authn.Anonymous:
		u.Groups = withGroup(u.Groups, authn.AllUnauthenticated)
	case !slices.Contains(u.Groups, authn.AllUnauthenticated):
		u.Groups = withGroup(u.Groups, authn.AllAuthenticated)
	}
	return u, nil
}

// checkName checks the user name: a node (constrained modes only) or a
// service account is asked about as such, and has its fixed groups.
func (c *modeCheck) checkName(wanted *impersonation, u *authn.User) error {
	info := c.part("users", wanted.name)
	if node, ok := nodeOf(wanted.name); ok && c.constrained() {
		info.Resource, info.Name = "nodes", node
		if len(wanted.groups) > 0 {
			return c.forbidden(info, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.groups))
		}
		u.Groups = []string{"system:nodes"}
	}
	if ns, name, ok := authn.SplitServiceAccountUsername(wanted.name); ok {
		info.Resource, info.Namespace, info.Name = "serviceaccounts", ns, name
		if c.constrained() && len(wanted.groups) > 0 {
			return c.forbidden(info, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.groups))
		}
		if len(wanted.groups) == 0 {
			u.Groups = authn.ServiceAccountGroups(ns)
		}
	}
	return c.authorize(authz.Attributes{User: c.requestor, Info: info})
}

// manyChecks is kube's number of parts from which a constrained mode first
// asks for all of them at once (name or subresource "*").
const manyChecks = 4

func (c *modeCheck) checkGroups(groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	if c.constrained() {
		if slices.Contains(groups, "") {
			return c.forbidden(c.part("groups", ""), "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, authn.SystemPrivilegedGroup) {
			return c.forbidden(c.part("groups", authn.SystemPrivilegedGroup), "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks && c.authorize(authz.Attributes{User: c.requestor, Info: c.part("groups", "*")}) == nil {
			return nil
		}
	}
	for _, g := range groups {
		if err := c.authorize(authz.Attributes{User: c.requestor, Info: c.part("groups", g)}); err != nil {
			return err
		}
	}
	return nil
}

func (c *modeCheck) checkExtra(extra map[string][]string) error {
	if len(extra) == 0 {
		return nil
	}
	if c.constrained() {
		if err := validateImpersonatedExtra(extra); err != nil {
			return c.forbidden(c.part("userextras", ""), err.Error())
		}
		if manyExtra(extra) {
			all := c.part("userextras", "*")
			all.Subresource = "*"
			if c.authorize(authz.Attributes{User: c.requestor, Info: all}) == nil {
				return nil
			}
		}
	}
	// kube walks a map; a sorted walk reports the same denial every time.
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range extra[k] {
			info := c.part("userextras", v)
			info.Subresource = k
			if err := c.authorize(authz.Attributes{User: c.requestor, Info: info}); err != nil {
				return err
			}
		}
	}
	return nil
}

func manyExtra(extra map[string][]string) bool {
	n := 0
	for _, vs := range extra {
		n += len(vs)
	}
	return len(extra) >= manyChecks || n >= manyChecks
}

// validateImpersonatedExtra is what the constrained modes require of
// extra keys and values, with kube's messages.
func validateImpersonatedExtra(extra map[string][]string) error {
	path := field.NewPath("extra", "key")
	for k, vs := range extra {
		switch {
		case k == "":
			return fmt.Errorf("impersonating the empty string key in extra is not allowed")
		case len(utilvalidation.IsDomainPrefixedPath(path, k)) > 0:
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w", utilvalidation.IsDomainPrefixedPath(path, k).ToAggregate())
		case k != strings.ToLower(k):
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", k)
		case len(vs) == 0:
			return fmt.Errorf("impersonating empty values in extra is not allowed")
		case slices.Contains(vs, ""):
			return fmt.Errorf("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

// withGroup is groups with g, in a new slice if g is added.
func withGroup(groups []string, g string) []string {
	if slices.Contains(groups, g) {
		return groups
	}
	return append(slices.Clip(groups), g)
}

// nodeOf returns the node of a node's user name (system:node:<name>, a
// valid node name).
func nodeOf(username string) (string, bool) {
	name, ok := strings.CutPrefix(username, "system:node:")
	if !ok || len(apivalidation.NameIsDNSSubdomain(name, false)) > 0 {
		return "", false
	}
	return name, true
}

// ownNode: a service account of a pod bound to a node (its token names the
// node) impersonating that node, and nothing else.
func ownNode(wanted *impersonation, requestor *authn.User) bool {
	node, ok := nodeOf(wanted.name)
	if !ok || !wanted.onlyName() {
		return false
	}
	if _, _, ok := authn.SplitServiceAccountUsername(requestor.Name); !ok {
		return false
	}
	bound := requestor.Extra[authn.NodeNameKey]
	return len(bound) == 1 && bound[0] == node
}

// associatedNodeKeys is the extra key kube gives the requestor of an
// associated-node check in place of its extra values.
const associatedNodeKeys = "authentication.kubernetes.io/associated-node-keys"

// asAnyOwnNode is what kube asks in the associated-node mode: whether the
// service account may impersonate its own node, whichever it is: the
// requestor's extra values (the node, the pod) become their keys, and the
// node's name "*".
func asAnyOwnNode(a authz.Attributes) authz.Attributes {
	keys := make([]string, 0, len(a.User.Extra))
	for k := range a.User.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	u := *a.User
	u.Extra = map[string][]string{associatedNodeKeys: keys}
	a.User = &u
	if a.Info.Verb == "impersonate:associated-node" {
		info := *a.Info
		info.Name = "*"
		a.Info = &info
	}
	return a
}
