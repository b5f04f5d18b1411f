package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Engine is the embedded engine the CLI and the UI share: everything an
// operator can trigger goes through it, so its rules (read-only refusal,
// audit, STATE_MODE semantics) hold whichever front end asked. Make one
// with New, and a session of it for another actor or environment with As
// or InEnv. Its settings are read through accessors and no front end can
// change them after New, so an engine handed to a goroutine or a session
// is not changed under it.
type Engine struct {
	store state.Store
	// spec is the loaded spec; nil when the engine was opened from the
	// store alone (a UI pointed at production), which can inspect but not
	// register.
	spec *spec.Spec
	opts Options
}

// Options are an engine's optional settings; the zero value is an engine
// of prod, on the wall clock, that may act, as no one in particular.
type Options struct {
	// SpecDir is the directory command executors run in.
	SpecDir string
	// Env is the environment (SCHEMA_SUFFIX) every read and action is
	// of; prod when zero.
	Env spec.Env
	// Now is the engine's clock; time.Now when nil. Tests and --as-of set it.
	Now func() time.Time
	// ReadOnly refuses every action that changes state, in the engine
	// itself, not only in the UI.
	ReadOnly bool
	// AllowLintErrors lets Apply (and so Run) register a spec whose
	// contracts lint proves can never be satisfied; a task graph no run
	// can order is refused all the same (RefuseLintErrors).
	AllowLintErrors bool
	// Actor names who acts, for the audit log ("alice", "ssh:bob").
	Actor string
	// Lease is how long a claimed unit is held without a heartbeat before
	// another worker may take it over; DefaultLease when zero.
	Lease time.Duration
	// LeaseClock is the clock of claims, leases and retry times; the wall
	// clock when nil. Tests set it to drive backoff without sleeping.
	LeaseClock func() time.Time
	// Log hears the engine's warnings (a lost lease, an audit row not
	// written); nothing when nil.
	Log *slog.Logger
	// Warehouses are the pools of the databases models' connections
	// name, built (with the backends that open them) and closed by the
	// composition root or the test that made the engine; the engine never
	// closes them. Nil: a model on a connection cannot run.
	Warehouses *executor.Warehouses
}

// New returns an engine over store for sp (nil: an engine opened from the
// store alone, which can inspect but not register) with opts. The engine
// closes neither the store nor opts.Warehouses: whoever opened them closes
// them, after the last engine or session over them is done.
func New(store state.Store, sp *spec.Spec, opts Options) *Engine {
	return &Engine{store: store, spec: sp, opts: opts}
}

// As is a session of the engine for another actor: the same store,
// spec, environment, clocks and warehouses, with actor acting and readOnly
// set (a viewer over SSH is read-only whatever the engine it came from).
// The session shares what is the process's (the store, the spec, the
// warehouse pools, the logger) and nothing that belongs to one session:
// it is a new Engine, and e is left as it was.
func (e *Engine) As(actor string, readOnly bool) *Engine {
	opts := e.opts
	opts.Actor, opts.ReadOnly = actor, readOnly
	return New(e.store, e.spec, opts)
}

// InEnv is a session of the engine in another environment (a UI switching
// to a PR's schema suffix), sharing what As shares: every read and action
// of it is env's.
func (e *Engine) InEnv(env spec.Env) *Engine {
	opts := e.opts
	opts.Env = env
	return New(e.store, e.spec, opts)
}

// Spec is the loaded spec; nil when the engine was opened from the store
// alone (a UI pointed at production). Front ends lay out pipelines and
// models from it; they must not change it.
func (e *Engine) Spec() *spec.Spec { return e.spec }

// SpecDir is the directory command executors run in (the spec's), for a
// front end that names files beside the spec.
func (e *Engine) SpecDir() string { return e.opts.SpecDir }

// Env is the environment every read and action of the engine is of.
func (e *Engine) Env() spec.Env { return e.opts.Env }

// ReadOnly reports whether the engine refuses every action that changes
// state: a front end hides or refuses what the engine would refuse.
func (e *Engine) ReadOnly() bool { return e.opts.ReadOnly }

// Actor names who acts, as the audit log records it.
func (e *Engine) Actor() string { return e.opts.Actor }

// ErrReadOnly is an action refused because the engine is read-only.
var ErrReadOnly = errors.New("refused: bollhav is read-only (--read-only)")

// Clock is the time by the engine's clock, in UTC: Now when it is set (tests,
// --as-of), the wall clock otherwise. Front ends read ages and gates by it,
// so they agree with the engine on what "now" is.
func (e *Engine) Clock() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now().UTC()
	}
	return time.Now().UTC()
}

// now is Clock, as the engine's own code spells it.
func (e *Engine) now() time.Time { return e.Clock() }

func (e *Engine) logger() *slog.Logger {
	if e.opts.Log != nil {
		return e.opts.Log
	}
	return slog.New(slog.DiscardHandler)
}

// RefuseReadOnly is refuseReadOnly for a front end that offers an action it
// knows the engine would refuse — a viewer pressing a run key over SSH — so
// the attempt is refused and audited like one the engine saw. It returns
// nil when the engine is not read-only.
func (e *Engine) RefuseReadOnly(ctx context.Context, action string, args map[string]string) error {
	return e.refuseReadOnly(ctx, action, args)
}

// refuseReadOnly returns a *state.RetiredError when the store is retired
// (moved away by store copy, or a snapshot: no audit row, the store would
// refuse it), and ErrReadOnly, naming the action, when the engine is
// read-only, and records the refusal in the audit log with the actor: a
// viewer who tried to torch production is something an operator wants to
// know about. A failure to write the audit row is logged, not returned: the
// refusal stands either way.
func (e *Engine) refuseReadOnly(ctx context.Context, action string, args map[string]string) error {
	if err := e.refuseRetired(ctx, action); err != nil {
		return err
	}
	if !e.opts.ReadOnly {
		return nil
	}
	err := fmt.Errorf("%s %w", action, ErrReadOnly)
	if args == nil {
		args = map[string]string{}
	}
	args["env"] = e.opts.Env.Suffix
	entry := state.AuditEntry{At: e.now(), Actor: e.opts.Actor, Action: action, Args: args, Outcome: "refused: read-only"}
	if aerr := e.store.Audit(context.WithoutCancel(ctx), entry); aerr != nil {
		e.logger().Warn("could not record a refused action in the audit log", "action", action, "err", aerr)
	}
	return err
}

// RunRequest is what a run, a reset or a plan is asked to do.
type RunRequest struct {
	// Models names models to run; empty with Pipeline empty means every
	// model of the spec.
	Models []string
	// Pipeline runs every task of one pipeline, over its task graph.
	Pipeline string
	// Downstream adds the downstream closure of Models.
	Downstream bool
	// Window is the run window; nil means no window, which each STATE_MODE
	// reads as docs/design.md, STATE_MODE, says.
	Window *state.Window
	Mode   spec.StateMode
	// IntervalOverride re-chunks flexible models (and, under torch, migrates
	// fixed ones); nil keeps each model's interval.
	IntervalOverride *state.Interval
	// Workers is how many units run at once in this process (default 1).
	Workers int
	// Outdated selects exactly the applied units built under another
	// definition than the model's current one (inside Window, when set)
	// and rebuilds them in bulldozer mode; models without any are left
	// out of the plan unless named.
	Outdated bool
	// RunReleased runs, once the run has ended, what it released
	// downstream (RunResult.Released), in the same command: for each
	// released model a discover run over its released windows, which runs
	// in turn what it releases (RunResult.Then) — with no downstream
	// closure of its own, since a closure over a daily window is refused
	// by a monthly model's grid. A run with Downstream does so after its
	// closure; a run of exactly some windows (the UI's ready units) asks
	// for it alone.
	RunReleased bool
	// Confirmed is the plan the operator was shown and accepted (a typed
	// torch confirmation): Run plans again at its clock and refuses, before
	// it records a run or changes a unit, when the store no longer gives
	// that plan. Nil runs whatever the store gives now.
	Confirmed *Plan
}
