package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Mark is the operator's repair: it sets model's units inside w to applied
// (the data was loaded by hand) or pending (run them again), and returns how
// many moved. Other statuses belong to the run loop and are refused. w is
// validated like a run window (not empty; aligned to a fixed model's grid);
// a timeless model's existence row is marked with the zero Window. Refused
// under read-only; audited with the actor, the arguments and the count.
func (e *Engine) Mark(ctx context.Context, model string, w state.Window, status state.UnitStatus) (n int, err error) {
	if err := e.refuseReadOnly(ctx, "mark", map[string]string{"model": model, "status": string(status), "window": w.String()}); err != nil {
		return 0, err
	}
	now := e.now()
	args := map[string]string{"env": e.opts.Env.Suffix, "model": model, "status": string(status)}
	if !w.IsZero() {
		args["window"] = w.String()
	}
	defer func() {
		outcome := "ok: " + strconv.Itoa(n) + " units"
		if err != nil {
			outcome = "error: " + err.Error()
		}
		if aerr := e.store.Audit(context.WithoutCancel(ctx), state.AuditEntry{At: now, Actor: e.opts.Actor, Action: "mark", Args: args, Outcome: outcome}); aerr != nil && err == nil {
			err = fmt.Errorf("recording the mark in the audit log: %w", aerr)
		}
	}()
	var from []state.UnitStatus
	switch status {
	case state.Applied:
		from = []state.UnitStatus{state.Pending, state.Blocked, state.Failed}
	case state.Pending:
		from = []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
	default:
		return 0, fmt.Errorf("mark %s as %q: an operator marks units applied or pending; the other statuses are the run loop's", model, status)
	}
	m, err := e.markModel(ctx, model)
	if err != nil {
		return 0, err
	}
	if m.Temporality == spec.Timeless {
		if !w.IsZero() {
			return 0, fmt.Errorf("model %s is timeless: it has one existence row and no windows; mark it without a window", model)
		}
	} else {
		if w.Empty() {
			return 0, fmt.Errorf("window %s is empty: since must be before until", w)
		}
		if !m.Flexible() {
			g, err := state.NewGrid(m.Chunking.Start, m.Chunking.Interval, m.Chunking.Location)
			if err != nil {
				return 0, fmt.Errorf("model %s: %w", model, err)
			}
			if err := g.Align(w); err != nil {
				return 0, fmt.Errorf("model %s: %w", model, err)
			}
		}
	}
	// Running units are left alone: their worker owns them, and a mark
	// never races a lease (its fence would be lost silently).
	return e.store.SetStatus(ctx, state.StatusChange{Env: e.opts.Env.Suffix, Model: model, Window: w, From: from, To: status, AppliedAt: now, Now: now})
}

// markModel is the model as registered (its grain is what its units were
// cut by), falling back to the spec when it is not registered.
func (e *Engine) markModel(ctx context.Context, name string) (*spec.Model, error) {
	rec, err := e.store.Model(ctx, e.opts.Env.Suffix, name)
	switch {
	case err == nil:
		return spec.ModelFromRecord(rec)
	case errors.Is(err, state.ErrNotFound):
		if e.spec != nil && e.spec.Model(name) != nil {
			return nil, fmt.Errorf("model %s is not registered in %s: it has no units to mark (run apply first)", name, e.opts.Env)
		}
		if e.spec != nil {
			return nil, spec.UnknownModelError(e.spec, name)
		}
		return nil, fmt.Errorf("unknown model %q: not registered in %s", name, e.opts.Env)
	default:
		return nil, fmt.Errorf("reading the registration of %s: %w", name, err)
	}
}
