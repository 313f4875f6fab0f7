package core

import (
	"context"
)

// allocTxn is what an allocation did, to be undone if the write that
// follows fails or completed (deferred releases) once it succeeded. It is
// used by one request at a time.
type allocTxn struct {
	commits, reverts []func()
	done             bool
}

func (t *allocTxn) onCommit(f func()) { t.commits = append(t.commits, f) }
func (t *allocTxn) onRevert(f func()) { t.reverts = append(t.reverts, f) }

// add makes op part of the transaction.
func (t *allocTxn) add(op *portOp) {
	t.onCommit(op.commit)
	t.onRevert(op.rollback)
}

// commit runs the deferred releases; a finished transaction does nothing.
func (t *allocTxn) commit() {
	if t == nil || t.done {
		return
	}
	t.done = true
	for _, f := range t.commits {
		f()
	}
}

// revert undoes the allocations, last first.
func (t *allocTxn) revert() {
	if t == nil || t.done {
		return
	}
	t.done = true
	for i := len(t.reverts) - 1; i >= 0; i-- {
		t.reverts[i]()
	}
}

// portOp is the node port part of a transaction: ports are allocated at
// once and released on rollback; releases wait for commit. ctx outlives
// the request: commit and rollback run after it. A dry run
// writes nothing: it checks requested ports against the stored bitmap and
// makes up free ones, numbered from 32769 as kube does.
type portOp struct {
	ctx       context.Context
	ports     NodePortAllocator
	dryRun    bool
	allocated []int
	deferred  []int
}

func newPortOp(ctx context.Context, ports NodePortAllocator, dryRun bool) *portOp {
	return &portOp{ctx: context.WithoutCancel(ctx), ports: ports, dryRun: dryRun}
}

func (op *portOp) allocate(ctx context.Context, port int) error {
	if op.dryRun {
		has, err := op.ports.Has(ctx, port)
		if err != nil {
			return err
		}
		if has || containsInt(op.allocated, port) {
			return errPortAllocated
		}
		op.allocated = append(op.allocated, port)
		return nil
	}
	if err := op.ports.Allocate(ctx, port); err != nil {
		return err
	}
	op.allocated = append(op.allocated, port)
	return nil
}

func (op *portOp) allocateNext(ctx context.Context) (int, error) {
	if op.dryRun {
		last := 0
		for _, p := range op.allocated {
			last = max(last, p)
		}
		if len(op.allocated) == 0 {
			last = 32768
		}
		op.allocated = append(op.allocated, last+1)
		return last + 1, nil
	}
	port, err := op.ports.AllocateNext(ctx)
	if err != nil {
		return 0, err
	}
	op.allocated = append(op.allocated, port)
	return port, nil
}

func (op *portOp) releaseDeferred(port int) { op.deferred = append(op.deferred, port) }

func (op *portOp) commit() {
	if op.dryRun {
		return
	}
	for _, p := range op.deferred {
		_ = op.ports.Release(op.ctx, p)
	}
}

func (op *portOp) rollback() {
	if op.dryRun {
		return
	}
	for _, p := range op.allocated {
		_ = op.ports.Release(op.ctx, p)
	}
}

// errPortAllocated is the dry-run answer for a taken port; the allocator's
// own error says the same.
var errPortAllocated = portError("provided port is already allocated")

type portError string

func (e portError) Error() string { return string(e) }
