package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// ApplyResult is what Apply did: every model of the spec, by what happened
// to its registration, as the store's Register found it in the transaction
// that wrote it — so of several applies at once, exactly one reports each
// new model created.
type ApplyResult struct {
	Env       string
	Created   []AppliedModel
	Changed   []AppliedModel
	Unchanged []AppliedModel
	// Deferred are fixed models whose grain changed, left at their old
	// registration for the torch run that migrates them (ApplyFor only).
	Deferred []AppliedModel
}

// taskIDs is the task id of every model of the apply, by name.
func (r *ApplyResult) taskIDs() map[string]int {
	out := make(map[string]int, len(r.Created)+len(r.Changed)+len(r.Unchanged)+len(r.Deferred))
	for _, group := range [][]AppliedModel{r.Created, r.Changed, r.Unchanged, r.Deferred} {
		for _, m := range group {
			out[m.Name] = m.TaskID
		}
	}
	return out
}

// AppliedModel is one model's registration outcome.
type AppliedModel struct {
	Name   string
	TaskID int
}

// GrainChangeError refuses a registration that would re-chunk a fixed model
// that already has units: its grid is its identity, so a new grain is a
// migration (STATE_MODE=torch), never a silent re-registration (the design's
// silent "fixed model, chunk grain changed" combination, caught).
type GrainChangeError struct {
	Env    string
	Models []GrainChange
}

// GrainChange is one refused model.
type GrainChange struct {
	Model      string
	Registered string // "1h grid from … (UTC)", or "flexible" / "timeless"
	Defined    string
	Units      int
}

func (e *GrainChangeError) Error() string {
	var b strings.Builder
	for i, c := range e.Models {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "model %s is registered as a %s with %d units, but the spec defines a %s: re-chunking a fixed model is a migration; run it with --mode torch (STATE_MODE=torch), which deletes its units and rebuilds the grid at the new grain",
			c.Model, c.Registered, c.Units, c.Defined)
	}
	return b.String()
}

// shapeName names a registration's or definition's state shape for
// GrainChange: the grid of a fixed model, else its kind.
func shapeName(rec state.ModelRecord) string {
	switch {
	case rec.Temporality == "timeless":
		return "timeless model"
	case rec.Flexibility == "flex":
		return "flexible model (" + rec.Interval + " chunks)"
	}
	iv, err1 := state.ParseInterval(rec.Interval)
	loc, err2 := state.LoadLocation(cmp.Or(rec.Timezone, "UTC"))
	if err1 != nil || err2 != nil {
		return "fixed " + rec.Interval + " grid from " + state.FormatTime(rec.Start) + " (" + rec.Timezone + ")"
	}
	return "fixed " + state.Grid{Start: rec.Start.UTC(), Interval: iv, Location: loc}.String()
}

// sameGrain reports whether two registrations cut units the same way: a
// fixed model's temporality, flexibility, interval, start and timezone; a
// flexible model's temporality (its chunk is not identity).
func sameGrain(old, neu state.ModelRecord) bool {
	if old.Temporality != neu.Temporality {
		return false
	}
	if neu.Temporality == "timeless" {
		return true
	}
	if neu.Flexibility == "flex" {
		return true // coverage of a fixed or flexible model is valid coverage
	}
	return old.Flexibility == "fix" && old.Interval == neu.Interval && old.Start.Equal(neu.Start) &&
		cmp.Or(old.Timezone, "UTC") == cmp.Or(neu.Timezone, "UTC")
}

func unitCount(st state.UnitStats) int {
	n := 0
	for _, c := range st.Counts {
		n += c
	}
	return n
}

// Apply registers the spec's models and task edges in the store for this
// environment, in one Register call. A fixed model already registered at
// another grain that has units is refused — the whole apply then changes
// nothing — with a *GrainChangeError that names both grains and says to run
// torch. A flexible model may change its interval freely. The apply is
// audited.
func (e *Engine) Apply(ctx context.Context) (*ApplyResult, error) {
	return e.apply(ctx, nil, false)
}

// ApplyFor is Apply ahead of a run of req: a fixed model whose grain changed
// and that req torches is not refused but left at its old registration
// (ApplyResult.Deferred) — ApplyPlan re-registers it after deleting its
// units, which is the migration. Unlike Apply it is audited only when it
// changed a registration (or failed): every run registers the spec first,
// and a row per run saying nothing changed would bury what did.
func (e *Engine) ApplyFor(ctx context.Context, req RunRequest) (*ApplyResult, error) {
	if req.Mode != spec.Torch {
		return e.apply(ctx, nil, true)
	}
	names, err := e.resolveModels(req)
	if err != nil {
		return nil, err
	}
	torched := map[string]bool{}
	for _, n := range names {
		torched[n] = true
	}
	return e.apply(ctx, torched, true)
}

// apply registers the spec; quiet leaves an apply that changed nothing out
// of the audit log.
func (e *Engine) apply(ctx context.Context, torched map[string]bool, quiet bool) (res *ApplyResult, err error) {
	if err := e.refuseReadOnly(ctx, "apply", nil); err != nil {
		return nil, err
	}
	if e.spec == nil {
		return nil, errors.New("apply needs a spec: the engine was opened from the store alone")
	}
	if err := RefuseLintErrors(e.spec, e.opts.AllowLintErrors); err != nil {
		return nil, err
	}
	env := e.opts.Env.Suffix
	now := e.now()
	defer func() {
		args := map[string]string{"env": env, "models": strconv.Itoa(len(e.spec.Models))}
		if e.spec.Path != "" {
			args["spec"] = e.spec.Path
		}
		if quiet && err == nil && len(res.Created)+len(res.Changed)+len(res.Deferred) == 0 {
			return
		}
		outcome := ""
		if err != nil {
			outcome = "error: " + err.Error()
		} else {
			outcome = fmt.Sprintf("ok: %d created, %d changed, %d unchanged", len(res.Created), len(res.Changed), len(res.Unchanged))
			if len(res.Deferred) > 0 {
				outcome += fmt.Sprintf(", %d deferred to torch", len(res.Deferred))
			}
		}
		if aerr := e.store.Audit(context.WithoutCancel(ctx), state.AuditEntry{At: now, Actor: e.opts.Actor, Action: "apply", Args: args, Outcome: outcome}); aerr != nil && err == nil {
			err = fmt.Errorf("recording the apply in the audit log: %w", aerr)
		}
	}()
	existing, err := e.registered(ctx)
	if err != nil {
		return nil, err
	}
	var (
		included []*spec.Model
		edges    []state.EdgeRecord
		refused  []GrainChange
		replaced []state.ModelRecord
	)
	res = &ApplyResult{Env: env}
	for _, m := range e.spec.Models {
		rec := spec.ModelRecord(env, m, state.Interval{})
		old, ok := existing[m.Name]
		if ok && !sameGrain(old, rec) {
			st, err := e.store.Stats(ctx, env, m.Name)
			if err != nil {
				return nil, fmt.Errorf("counting units of %s: %w", m.Name, err)
			}
			if n := unitCount(st); n > 0 {
				if torched[m.Name] {
					res.Deferred = append(res.Deferred, AppliedModel{Name: m.Name, TaskID: old.TaskID})
					continue
				}
				refused = append(refused, GrainChange{Model: m.Name, Registered: shapeName(old), Defined: shapeName(rec), Units: n})
				continue
			}
		}
		if ok && old.ContentHash != rec.ContentHash {
			replaced = append(replaced, old)
		}
		included = append(included, m)
		edges = append(edges, spec.EdgeRecords(env, e.spec, m)...)
	}
	if len(refused) > 0 {
		return nil, &GrainChangeError{Env: env, Models: refused}
	}
	if err := e.keepReplaced(ctx, replaced); err != nil {
		return nil, err
	}
	// The records are made again as the store writes them, not held: a
	// definition, its hash and fingerprint for each of 60,000 models are
	// 50 MB, beside a spec of as much.
	records := func(yield func(state.ModelRecord) bool) {
		for _, m := range included {
			if !yield(spec.ModelRecord(env, m, state.Interval{})) {
				return
			}
		}
	}
	// What was created or changed is the store's to say: the registry read
	// above may be out of date by the time the registration commits (an
	// apply beside this one registered the same models first).
	reg, err := e.store.RegisterSeq(ctx, env, records, edges, now)
	if err != nil {
		return nil, fmt.Errorf("registering the spec: %w", err)
	}
	created, changed := setOf(reg.Created), setOf(reg.Changed)
	for _, m := range included {
		am := AppliedModel{Name: m.Name, TaskID: reg.TaskIDs[m.Name]}
		switch {
		case created[m.Name]:
			res.Created = append(res.Created, am)
		case changed[m.Name]:
			res.Changed = append(res.Changed, am)
		default:
			res.Unchanged = append(res.Unchanged, am)
		}
	}
	return res, nil
}

func setOf(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// registered is the environment's registrations by name, without their
// definitions (Store.ModelHeads): a registry of 60,000 models holds 35 MB
// of them, and only keepReplaced reads any, of the models an apply
// replaces.
func (e *Engine) registered(ctx context.Context) (map[string]state.ModelRecord, error) {
	recs, err := e.store.ModelHeads(ctx, e.opts.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models: %w", err)
	}
	out := make(map[string]state.ModelRecord, len(recs))
	for _, r := range recs {
		out[r.Name] = r
	}
	return out, nil
}

// replacedOneByOne is the most replaced definitions keepReplaced reads one
// registration at a time; more are read in one read of every registration
// (a spec whose every definition changed), which holds them all at once.
// A test lowers it to take that read.
var replacedOneByOne = 1000

// keepReplaced keeps, in the definition history, the registrations an
// apply is about to replace with another definition (old, read without
// their definitions), first seen when they were registered: a store
// written by a bollhav that kept no history has only the current
// registration, and without it `why` could not say what changed under the
// windows built before. A definition already kept keeps its earlier time
// (RecordDefinitions), so this changes nothing once the history is
// complete.
func (e *Engine) keepReplaced(ctx context.Context, old []state.ModelRecord) error {
	if len(old) == 0 {
		return nil
	}
	env := e.opts.Env.Suffix
	var all map[string]state.ModelRecord
	if len(old) > replacedOneByOne {
		recs, err := e.store.Models(ctx, env)
		if err != nil {
			return fmt.Errorf("reading the registered models: %w", err)
		}
		all = make(map[string]state.ModelRecord, len(recs))
		for _, r := range recs {
			all[r.Name] = r
		}
	}
	var defs []state.DefinitionRecord
	for _, head := range old {
		rec, ok := all[head.Name]
		if all == nil {
			r, err := e.store.Model(ctx, env, head.Name)
			if err != nil && !errors.Is(err, state.ErrNotFound) {
				return fmt.Errorf("reading the registration of %s: %w", head.Name, err)
			}
			rec, ok = r, err == nil
		}
		if !ok || len(rec.Definition) == 0 {
			continue
		}
		fp, err := spec.RecordFingerprint(rec)
		if err != nil || fp == "" {
			continue // an unreadable old definition: nothing to diff against
		}
		defs = append(defs, state.DefinitionRecord{Env: env, Model: rec.Name, Fingerprint: fp, Definition: rec.Definition, FirstSeen: rec.RegisteredAt})
	}
	if len(defs) == 0 {
		return nil
	}
	if err := e.store.RecordDefinitions(ctx, defs); err != nil {
		return fmt.Errorf("keeping the replaced definitions: %w", err)
	}
	return nil
}
