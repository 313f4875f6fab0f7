package garbagecollector

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unique"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// event is one informer notification: the object's node, as the
// informer's cache keeps it.
type event struct {
	node    *node
	deleted bool
}

// node is what the graph knows of one object. Nodes are never changed once
// in the graph, only replaced, so a pointer read under the lock may be used
// after it. The informers' caches hold the same nodes (newMonitor): an
// informer reads their namespace, name and resourceVersion (GetObjectMeta).
//
// A node is kept to 64 bytes, as every watched object has one: what most
// objects lack (owners, a deletion under way, a resourceVersion that is not
// a number) is in extra, and namespaces are shared between nodes.
type node struct {
	id    uuid.UUID                    // the UID, unless extra.uid holds it
	gvr   *schema.GroupVersionResource // the resource it was seen through; its monitor's
	ns    unique.Handle[string]        // of "" for cluster-scoped objects
	name  string
	rv    uint64 // the resourceVersion, unless extra.rv holds it
	extra *nodeExtra
}

// nodeExtra is what few nodes need.
type nodeExtra struct {
	uid        types.UID // a UID that is not a UUID in canonical form
	oddUID     bool
	owners     []metav1.OwnerReference
	rv         string // a resourceVersion that is not a decimal number
	deleting   bool   // deletionTimestamp is set
	foreground bool   // deleting, with the foregroundDeletion finalizer
	orphan     bool   // deleting, with the orphan finalizer
}

func newNode(gvr *schema.GroupVersionResource, m *metav1.PartialObjectMetadata) *node {
	n := &node{gvr: gvr, ns: unique.Make(m.Namespace), name: m.Name}
	var x nodeExtra
	if id, ok := uuidOf(m.UID); ok {
		n.id = id
	} else {
		x.uid, x.oddUID = m.UID, true
	}
	rv, err := strconv.ParseUint(m.ResourceVersion, 10, 64)
	if err == nil && strconv.FormatUint(rv, 10) == m.ResourceVersion {
		n.rv = rv
	} else {
		x.rv = m.ResourceVersion
	}
	x.owners = m.OwnerReferences
	if m.DeletionTimestamp != nil {
		x.deleting = true
		x.foreground = slices.Contains(m.Finalizers, metav1.FinalizerDeleteDependents)
		x.orphan = slices.Contains(m.Finalizers, metav1.FinalizerOrphanDependents)
	}
	if x.owners != nil || x.rv != "" || x.deleting || x.oddUID {
		n.extra = &x
	}
	return n
}

var noExtra nodeExtra

// clusterScoped is the namespace of cluster-scoped nodes.
var clusterScoped = unique.Make("")

func (n *node) x() *nodeExtra {
	if n.extra == nil {
		return &noExtra
	}
	return n.extra
}

func (n *node) namespace() string               { return n.ns.Value() }
func (n *node) owners() []metav1.OwnerReference { return n.x().owners }
func (n *node) deleting() bool                  { return n.x().deleting }
func (n *node) foreground() bool                { return n.x().foreground }
func (n *node) orphan() bool                    { return n.x().orphan }

// uid is n's UID; the server gives every object a UUID, kept as its 16
// bytes instead of a 36-byte string.
func (n *node) uid() types.UID {
	if n.extra != nil && n.extra.oddUID {
		return n.extra.uid
	}
	return types.UID(n.id.String())
}

// uuidOf returns the UUID uid is the canonical text of.
func uuidOf(uid types.UID) (uuid.UUID, bool) {
	if len(uid) != 36 || strings.ContainsAny(string(uid), "ABCDEF") {
		return uuid.UUID{}, false
	}
	id, err := uuid.Parse(string(uid))
	return id, err == nil
}

func (n *node) resourceVersion() string {
	if n.extra != nil && n.extra.rv != "" {
		return n.extra.rv
	}
	return strconv.FormatUint(n.rv, 10)
}

// GetObjectMeta is what an informer reads of n (meta.Accessor): its key,
// and its resourceVersion, which tells an update from a resync.
func (n *node) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: n.namespace(), Name: n.name, UID: n.uid(), ResourceVersion: n.resourceVersion()}
}

// ownedValidlyBy reports whether a reference of n may point at owner: an
// owner is cluster-scoped or in n's namespace, never namespaced when n is
// cluster-scoped. A reference that breaks the rule names no existing owner,
// as in kube, which looks the owner up in the dependent's namespace.
func (n *node) ownedValidlyBy(owner *node) bool {
	return owner.ns == clusterScoped || owner.ns == n.ns
}

// graph holds every watched object by UID and, for each owner UID, the
// objects whose references name it, whether or not the owner exists.
type graph struct {
	mu         sync.Mutex
	nodes      map[uuid.UUID]*node
	odd        map[types.UID]*node // nodes whose UID is not a UUID
	dependents map[types.UID]map[types.UID]struct{}
}

func newGraph() *graph {
	return &graph{nodes: map[uuid.UUID]*node{}, odd: map[types.UID]*node{}, dependents: map[types.UID]map[types.UID]struct{}{}}
}

func (g *graph) node(uid types.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.get(uid)
}

func (g *graph) get(uid types.UID) *node {
	if id, ok := uuidOf(uid); ok {
		return g.nodes[id]
	}
	return g.odd[uid]
}

func (g *graph) put(uid types.UID, n *node) {
	if id, ok := uuidOf(uid); ok {
		g.nodes[id] = n
	} else {
		g.odd[uid] = n
	}
}

func (g *graph) remove(uid types.UID) {
	if id, ok := uuidOf(uid); ok {
		delete(g.nodes, id)
	} else {
		delete(g.odd, uid)
	}
}

// len is how many objects g holds.
func (g *graph) len() int { return len(g.nodes) + len(g.odd) }

func (g *graph) link(dependent types.UID, owners []metav1.OwnerReference) {
	for _, o := range owners {
		deps := g.dependents[o.UID]
		if deps == nil {
			deps = map[types.UID]struct{}{}
			g.dependents[o.UID] = deps
		}
		deps[dependent] = struct{}{}
	}
}

func (g *graph) unlink(dependent types.UID, owners []metav1.OwnerReference) {
	for _, o := range owners {
		if deps := g.dependents[o.UID]; deps != nil {
			delete(deps, dependent)
			if len(deps) == 0 {
				delete(g.dependents, o.UID)
			}
		}
	}
}

// validDependents returns the nodes that reference owner validly, and of
// those the ones whose reference blocks the owner's deletion.
func (g *graph) validDependents(owner *node) (all, blocking []*node) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ownerUID := owner.uid()
	for uid := range g.dependents[ownerUID] {
		d := g.get(uid)
		if d == nil || !d.ownedValidlyBy(owner) {
			continue
		}
		all = append(all, d)
		for _, ref := range d.owners() {
			if ref.UID == ownerUID && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				blocking = append(blocking, d)
				break
			}
		}
	}
	return all, blocking
}

// solidOwners reports whether the graph shows every owner reference of n as
// naming an existing owner that is not waiting for its dependents: n is then
// left alone without asking the server.
func (g *graph) solidOwners(n *node, refs []metav1.OwnerReference) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ref := range refs {
		o := g.get(ref.UID)
		if o == nil || o.name != ref.Name || !n.ownedValidlyBy(o) || o.foreground() {
			return false
		}
	}
	return true
}

// processGraphChange applies one informer notification to the graph and
// queues the work it calls for; it returns false once the queue is shut down.
func (c *Controller) processGraphChange() bool {
	ev, quit := c.events.Get()
	if quit {
		return false
	}
	defer c.events.Done(ev)
	g := c.graph
	g.mu.Lock()
	defer g.mu.Unlock()

	n := ev.node
	uid := n.uid()
	old := g.get(uid)
	if ev.deleted {
		if old != nil {
			g.remove(uid)
			g.unlink(uid, old.owners())
			// Owners waiting for this dependent may go now.
			for _, ref := range old.owners() {
				if o := g.get(ref.UID); o != nil && o.foreground() {
					c.toDelete.Add(o.uid())
				}
			}
		}
		// Dependents of this owner may have lost their last owner.
		for d := range g.dependents[uid] {
			c.toDelete.Add(d)
		}
		return true
	}

	g.put(uid, n)
	ownersChanged := old == nil || !slices.Equal(ownerKeys(old.owners()), ownerKeys(n.owners()))
	if ownersChanged {
		if old != nil {
			g.unlink(uid, old.owners())
		}
		g.link(uid, n.owners())
		if len(n.owners()) > 0 {
			c.toDelete.Add(uid)
		}
		// A reference dropped or no longer blocking frees an owner waiting
		// in the foreground.
		var refs []metav1.OwnerReference
		if old != nil {
			refs = old.owners()
		}
		for _, ref := range append(refs, n.owners()...) {
			if o := g.get(ref.UID); o != nil && o.foreground() {
				c.toDelete.Add(o.uid())
			}
		}
	}
	if n.foreground() && (old == nil || !old.foreground()) {
		c.toDelete.Add(uid)
		for d := range g.dependents[uid] {
			c.toDelete.Add(d)
		}
	}
	if n.orphan() && (old == nil || !old.orphan()) {
		c.toOrphan.Add(uid)
	}
	return true
}

// ownerKey is what of an owner reference matters to the graph.
type ownerKey struct {
	uid   types.UID
	name  string
	block bool
}

func ownerKeys(refs []metav1.OwnerReference) []ownerKey {
	out := make([]ownerKey, len(refs))
	for i, r := range refs {
		out[i] = ownerKey{uid: r.UID, name: r.Name, block: r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion}
	}
	return out
}
