package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Moving a store (docs/semantics.md, "Moving a store"): `bollhav store
// copy` fills an empty store, of either backend, with this engine's
// store's whole state in one transaction. A move hands the store's
// identity over with it and retires this store, so two live stores never
// share an identity (a warehouse ledger tells stores apart by it); a
// snapshot gets an identity of its own and refuses writes, and this store
// goes on as before.

// CopyOptions is what CopyStore is asked to do.
type CopyOptions struct {
	// Snapshot copies without moving: the target keeps its own identity
	// and refuses writes; this store stays live.
	Snapshot bool
	// Source and Target name the two stores as the retirement records
	// them: DSNs without passwords.
	Source, Target string
	// Progress, when set, is called as units are copied: done of total.
	Progress func(done, total int64)
}

// CopyResult is what a copy did.
type CopyResult struct {
	Snapshot bool
	// Finished is a move whose copy an earlier store copy committed but
	// whose source it did not retire: this one only retired it.
	Finished bool
	// Identity is the target's store identity: the source's after a move.
	Identity string
	// Rows counts what was copied, by kind: models, edges, definitions,
	// runs, task_runs, units, attempts, audit.
	Rows map[string]int64
	// DataStaysBehind lists the spec's models whose data lives in this
	// store's own database, which a copy of the state does not take: in
	// the target their units are applied but their tables are not there.
	DataStaysBehind []string
	Elapsed         time.Duration
}

// ErrNotCopyable is a store whose backend cannot be copied.
var ErrNotCopyable = errors.New("this state store cannot be copied")

// CopyStore copies the engine's store into target, which the front end
// opened (and closes). A move is refused in read-only mode: it retires
// this store. A move whose target already holds this store's identity
// (an earlier copy committed and was cut off before it retired the
// source) only retires this store.
func (e *Engine) CopyStore(ctx context.Context, target state.Store, opts CopyOptions) (*CopyResult, error) {
	start := time.Now()
	src, ok := e.store.(state.StoreCopier)
	dst, ok2 := target.(state.StoreCopier)
	if !ok || !ok2 {
		return nil, ErrNotCopyable
	}
	action := "store copy"
	args := map[string]string{"from": opts.Source, "to": opts.Target, "mode": "move"}
	if opts.Snapshot {
		args["mode"] = "snapshot"
	} else if err := e.refuseReadOnly(ctx, action, args); err != nil {
		return nil, err
	}
	res := &CopyResult{Snapshot: opts.Snapshot, Rows: map[string]int64{}}
	srcID, err := e.store.Identity(ctx)
	if err != nil {
		return nil, fmt.Errorf("store copy: this store's identity: %w", err)
	}
	dstID, err := target.Identity(ctx)
	if err != nil {
		return nil, fmt.Errorf("store copy: the target's identity: %w", err)
	}
	now := e.now()
	if !opts.Snapshot && srcID == dstID {
		if err := src.Retire(ctx, state.Retirement{Kind: state.RetiredMoved, Other: opts.Target, At: now}); err != nil {
			return nil, fmt.Errorf("store copy: the target holds this store's copy already; retiring this store: %w", err)
		}
		res.Finished, res.Identity, res.Elapsed = true, srcID, time.Since(start)
		return res, nil
	}
	in := state.CopyInOptions{}
	out := state.CopyOutOptions{Progress: opts.Progress}
	res.Identity = srcID
	if opts.Snapshot {
		in.Snapshot = &state.Retirement{Kind: state.RetiredSnapshot, Other: opts.Source, At: now}
		res.Identity = dstID
	} else {
		out.Retire = &state.Retirement{Kind: state.RetiredMoved, Other: opts.Target, At: now}
	}
	w, err := dst.CopyIn(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("store copy: %w", err)
	}
	cw := &countingWriter{CopyWriter: newPipeWriter(w), rows: res.Rows, audit: state.AuditEntry{At: now, Actor: e.opts.Actor, Action: action, Args: args, Outcome: "ok"}}
	if err := src.CopyOut(ctx, cw, out); err != nil {
		if cw.committed {
			return nil, fmt.Errorf("store copy: the copy into %s committed, but this store was not retired: %w; "+
				"run the same bollhav store copy again to retire it, and run nothing against this store meanwhile", opts.Target, err)
		}
		return nil, fmt.Errorf("store copy: %w (nothing was committed in the target; this store is as it was)", err)
	}
	res.DataStaysBehind = e.dataInStore(ctx)
	res.Elapsed = time.Since(start)
	return res, nil
}

// dataInStore lists the spec's models that write their data into the
// state store's own database (a query or sql model with no connection of
// its own); nil without a spec.
func (e *Engine) dataInStore(ctx context.Context) []string {
	if e.spec == nil {
		return nil
	}
	var out []string
	for _, m := range e.spec.Models {
		if m.Run.Kind != spec.RunQuery && m.Run.Kind != spec.RunSQL && m.Run.Kind != spec.RunView {
			continue
		}
		if e.DataHome(ctx, m.Name).EnvVar == "" {
			out = append(out, m.Name)
		}
	}
	return out
}

// countingWriter counts what passes through it, and records the copy in
// the target's audit log, after the copied rows: an audit row carries
// its id, so it takes the one after the largest copied.
type countingWriter struct {
	state.CopyWriter
	rows      map[string]int64
	audit     state.AuditEntry
	committed bool
}

// counted counts one row of kind and writes it with write.
func counted[T any](c *countingWriter, kind string, write func(T) error, v T) error {
	c.rows[kind]++
	return write(v)
}

func (c *countingWriter) Model(m state.ModelRecord) error {
	return counted(c, "models", c.CopyWriter.Model, m)
}
func (c *countingWriter) Edge(x state.EdgeRecord) error {
	return counted(c, "edges", c.CopyWriter.Edge, x)
}
func (c *countingWriter) Definition(d state.DefinitionRecord) error {
	return counted(c, "definitions", c.CopyWriter.Definition, d)
}
func (c *countingWriter) Run(r state.Run) error { return counted(c, "runs", c.CopyWriter.Run, r) }
func (c *countingWriter) TaskRun(t state.TaskRunEntry) error {
	return counted(c, "task_runs", c.CopyWriter.TaskRun, t)
}
func (c *countingWriter) Unit(u state.Unit) error { return counted(c, "units", c.CopyWriter.Unit, u) }

func (c *countingWriter) Attempt(id int64, a state.Attempt) error {
	c.rows["attempts"]++
	return c.CopyWriter.Attempt(id, a)
}

func (c *countingWriter) Audit(a state.AuditEntry) error {
	c.rows["audit"]++
	c.audit.ID = max(c.audit.ID, a.ID)
	return c.CopyWriter.Audit(a)
}

func (c *countingWriter) Commit(ctx context.Context) error {
	c.audit.ID++
	if err := c.CopyWriter.Audit(c.audit); err != nil {
		return errors.Join(err, c.CopyWriter.Rollback())
	}
	if err := c.CopyWriter.Commit(ctx); err != nil {
		return err
	}
	c.committed = true
	return nil
}

// refuseRetired refuses action, before it writes anything, when the
// store is retired: the store's own triggers would refuse its first write
// anyway, but mid-way and in the backend's words.
func (e *Engine) refuseRetired(ctx context.Context, action string) error {
	c, ok := e.store.(state.StoreCopier)
	if !ok {
		return nil
	}
	r, err := c.Retirement(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	if r != nil {
		return &state.RetiredError{Action: action, Retirement: *r}
	}
	return nil
}

// Retirement is how the engine's store was retired (moved away by store
// copy, or a read-only snapshot); nil for a live store.
func (e *Engine) Retirement(ctx context.Context) (*state.Retirement, error) {
	c, ok := e.store.(state.StoreCopier)
	if !ok {
		return nil, nil
	}
	return c.Retirement(ctx)
}
