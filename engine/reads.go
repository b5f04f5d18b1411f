package engine

import (
	"context"
	"time"

	"github.com/bollhav/bollhav/state"
)

// The reads below are the state store's, through the engine: a front end
// holds an engine, never the store (docs/design.md, every read and action
// goes through the engine), so the engine decides which environment a read
// sees and a future cache or access rule sits in one place. Where the
// store's read takes an environment, the engine's is used; reads of one
// run, of the audit log or of the change feed name no environment.

// Backend names the state store's implementation ("sqlite", "postgres"),
// for a header or a metric label: never its DSN.
func (e *Engine) Backend() string { return e.store.Backend() }

// SchemaVersion is the migration version the state store is at: a cheap
// round trip, which a front end also uses to see whether the store answers.
func (e *Engine) SchemaVersion(ctx context.Context) (int, error) {
	return e.store.SchemaVersion(ctx)
}

// Models lists the models registered in the engine's environment, by name.
func (e *Engine) Models(ctx context.Context) ([]state.ModelRecord, error) {
	return e.store.Models(ctx, e.opts.Env.Suffix)
}

// ModelStats counts a model's units in the engine's environment by status
// and finds its newest applied time (state.Store.Stats).
func (e *Engine) ModelStats(ctx context.Context, model string) (state.UnitStats, error) {
	return e.store.Stats(ctx, e.opts.Env.Suffix, model)
}

// Coverage is the union of a model's applied windows within w in the
// engine's environment, from the store's coverage index.
func (e *Engine) Coverage(ctx context.Context, model string, w state.Window) (state.IntervalSet, error) {
	return e.store.Coverage(ctx, e.opts.Env.Suffix, model, w)
}

// ScanStoredUnits streams the units of a model in the engine's environment
// that overlap w (all when w is zero) and have one of statuses (any when
// empty), in window order, straight from the store: unlike ScanUnits it
// does not read the model's status first, for a caller that already has
// it (a timeline reading the units of the model it shows).
func (e *Engine) ScanStoredUnits(ctx context.Context, model string, w state.Window, statuses []state.UnitStatus, fn func(state.Unit) error) error {
	return e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: model, Window: w, Statuses: statuses}, fn)
}

// Runs lists the newest runs of the engine's environment first, at most
// limit.
func (e *Engine) Runs(ctx context.Context, limit int) ([]state.Run, error) {
	return e.store.Runs(ctx, e.opts.Env.Suffix, limit)
}

// UnfinishedRuns lists the runs of the engine's environment that have not
// finished (going on, or left so by a crash), oldest first.
func (e *Engine) UnfinishedRuns(ctx context.Context) ([]state.Run, error) {
	return e.store.UnfinishedRuns(ctx, e.opts.Env.Suffix)
}

// RunRecord returns the run with id, whatever its environment: an id names
// one run in the store. (Run is the action that starts one.)
func (e *Engine) RunRecord(ctx context.Context, id int64) (state.Run, error) {
	return e.store.GetRun(ctx, id)
}

// TaskLog returns every attempt of every task under a run, by task and
// attempt.
func (e *Engine) TaskLog(ctx context.Context, runID int64) ([]state.TaskRunEntry, error) {
	return e.store.TaskLog(ctx, runID)
}

// AuditLog returns the newest operator actions of every environment, at
// most limit: the audit log is the store's, one for all of them.
func (e *Engine) AuditLog(ctx context.Context, limit int) ([]state.AuditEntry, error) {
	return e.store.AuditLog(ctx, limit)
}

// Changes returns the change feed's changes after seq, oldest first, at
// most limit, of every environment (the feed is the store's, one for all).
func (e *Engine) Changes(ctx context.Context, after int64, limit int) ([]state.Change, error) {
	return e.store.Changes(ctx, after, limit)
}

// Follow streams the change feed from after (0: its start) until ctx ends,
// as state.Follower does: poll bounds how long a change waits unseen, and
// onError, when set, hears each failed read and nil on the first success
// after failures. The channel closes when ctx ends.
func (e *Engine) Follow(ctx context.Context, after int64, poll time.Duration, onError func(error)) <-chan state.Change {
	return state.Follower{Store: e.store, After: after, Poll: poll, OnError: onError}.Follow(ctx)
}
