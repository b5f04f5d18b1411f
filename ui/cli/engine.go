package cli

import (
	"cmp"
	gocontext "context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/stores"
)

// openEngine loads the spec, opens the store the DSN names (--dsn, else
// BOLLHAV_DSN, else .bollhav/state.db beside the spec) and returns an engine
// over both for the environment of --env (else SCHEMA_SUFFIX), with the
// function that closes what it opened. On failure it prints one clear
// line — never a password — and returns the exit code.
func (c *cmdContext) openEngine(ctx gocontext.Context, cmd string) (*engine.Engine, func(), int) {
	o, sp, code := c.openSpecStore(ctx, cmd)
	if o == nil {
		return nil, nil, code
	}
	return o.engine(sp), o.close, ExitOK
}

// withEngine is the set-up of a command that takes no argument and only
// reads or registers through the engine (apply, status): an argument is a
// usage error, the engine is opened as openEngine opens it, and the store
// is closed once body returns body's exit code.
func (c *cmdContext) withEngine(cmd string, args []string, body func(ctx gocontext.Context, e *engine.Engine) int) int {
	if len(args) > 0 {
		return c.fail(cmd, &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	}
	e, closeStore, code := c.openEngine(c.ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	return body(c.ctx, e)
}

// openSpecStore is openEngine for a command that sets more of the engine's
// options (a logger, a lease) before it makes the engine with o.engine(sp).
func (c *cmdContext) openSpecStore(ctx gocontext.Context, cmd string) (*opened, *spec.Spec, int) {
	sp, code := c.loadSpec(cmd)
	if sp == nil {
		return nil, nil, code
	}
	if registersOrRuns[cmd] {
		// Refused before the store is even opened: a spec lint proves
		// wrong leaves no registration, run row, unit or store file.
		if err := engine.RefuseLintErrors(sp, c.AllowLintErrors); err != nil {
			fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
			return nil, nil, ExitUsage
		}
	}
	if runsData[cmd] {
		// A connection's variable unset or empty: named before the store
		// is opened, so nothing runs half-way and fails unit by unit.
		if err := executor.CheckConnections(sp.Models, os.Getenv); err != nil {
			fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
			return nil, nil, ExitUsage
		}
	}
	var lint chan error
	if readsOnly[cmd] {
		// Lint runs beside the store's opening: 20 ms at 1,000 models.
		lint = make(chan error, 1)
		go func() { lint <- engine.RefuseLintErrors(sp, false) }()
	}
	var o *opened
	var err error
	if readsOnly[cmd] {
		o, err = c.openExisting(ctx, cmd)
	} else {
		o, err = c.openStore(ctx)
	}
	if lint != nil {
		var le *engine.LintError
		if errors.As(<-lint, &le) {
			c.warnLintErrors(cmd, le)
		}
	}
	if o != nil && o.note != "" {
		c.notes = append(c.notes, o.note)
	}
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
		return nil, nil, ExitUsage
	}
	return o, sp, ExitOK
}

// readsOnly are the commands that only read the store. They never create
// one: a store that is not there yet reads as empty (openExisting). And
// they warn when lint finds an error in the spec, which apply and run
// refuse: the counts they show are of a spec that cannot be run as it is.
var readsOnly = map[string]bool{"status": true, "units": true, "incidents": true, "blocked": true, "why": true, "plan": true, "watch": true}

// warnLintErrors says on stderr, in one line, that lint finds errors in
// the spec, naming the first.
func (c *cmdContext) warnLintErrors(cmd string, le *engine.LintError) {
	f := le.Findings[0]
	where := c.Spec
	if f.Pos.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", cmp.Or(f.Pos.File, c.Spec), f.Pos.Line, f.Pos.Column)
	}
	more := ""
	if n := len(le.Findings); n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	fmt.Fprintf(c.Err, "bollhav %s: warning: the spec has %d lint error%s, which apply and run refuse (bollhav lint lists them): %s: %s: %s%s\n",
		cmd, len(le.Findings), plural(len(le.Findings)), where, f.Rule, oneLine(f.Message), more)
}

// openExisting is openStore for a command that only reads: a store the DSN
// names that does not exist yet is not created. The command reads an empty
// store instead — one made in a temporary folder and removed when it
// closes, which answers as a new store would — and says so (note); watch,
// which would wait on it for ever, is refused.
func (c *cmdContext) openExisting(ctx gocontext.Context, cmd string) (*opened, error) {
	pgSchema := os.Getenv("BOLLHAV_PG_SCHEMA")
	exists, d, err := stores.Exists(ctx, c.dsn(), filepath.Dir(c.Spec), stores.Options{PostgresSchema: pgSchema})
	if err != nil {
		return nil, err
	}
	if exists {
		return c.openStore(ctx)
	}
	where := d.Redacted()
	if d.Kind == state.KindPostgres {
		where += " (schema " + cmp.Or(pgSchema, "bollhav") + ")"
	}
	if cmd == "watch" {
		return nil, fmt.Errorf("no state store at %s: nothing to watch until apply or run creates it", where)
	}
	tmp, err := os.MkdirTemp("", "bollhav-empty-")
	if err != nil {
		return nil, err
	}
	o, err := c.openStoreAt(ctx, filepath.Join(tmp, "state.db"))
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	closeStore := o.close
	o.close = func() {
		closeStore()
		_ = os.RemoveAll(tmp)
	}
	o.note = fmt.Sprintf("no state store at %s yet (nothing was applied or run with it): read as empty, and not created; apply or run creates it", where)
	return o, nil
}

// opened is what a command opened for its engines — the state store and
// the warehouse pools — with the engine options its flags give. The CLI
// is the composition root: it opens both, hands them to every engine it
// makes, and closes them (close) when the command is done; no engine
// closes either.
type opened struct {
	store state.Store
	opts  engine.Options
	close func()
	// note is what the command says on stderr about the store when it
	// succeeds: that it read an empty one (openExisting).
	note string
}

// engine is an engine over o's store for sp (nil: from the store alone)
// with o's options.
func (o *opened) engine(sp *spec.Spec) *engine.Engine { return engine.New(o.store, sp, o.opts) }

// openStore opens the store the DSN names and the options of an engine over
// it for the environment of --env, at --as-of when given; its error is for
// the caller to print (after a spec's problems, which come first).
func (c *cmdContext) openStore(ctx gocontext.Context) (*opened, error) {
	return c.openStoreAt(ctx, c.dsn())
}

// openStoreAt is openStore on the store dsn names.
func (c *cmdContext) openStoreAt(ctx gocontext.Context, dsn string) (*opened, error) {
	_, _, env, err := engine.ResolveRunSettings(engine.RunFlags{Env: c.Env, EnvGiven: c.flagGiven("env")}, os.Getenv)
	if err != nil {
		return nil, err
	}
	specDir := filepath.Dir(c.Spec)
	store, _, err := stores.Open(ctx, dsn, specDir, stores.Options{PostgresSchema: os.Getenv("BOLLHAV_PG_SCHEMA")})
	if err != nil {
		return nil, err
	}
	// The warehouse pools models' connections name: opened on first use
	// with the backends this composition root knows, and closed with the
	// store when the command is done.
	warehouses := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	opts := engine.Options{SpecDir: specDir, Env: env, ReadOnly: c.ReadOnly, Actor: actor(), Warehouses: warehouses,
		AllowLintErrors: c.AllowLintErrors}
	if c.AsOf != "" {
		// checkGlobals has parsed it already. Leases keep the wall clock
		// (engine.leaseClock); everything judged "now" uses this instant.
		at, _ := state.ParseTime(c.AsOf)
		opts.Now = func() time.Time { return at }
	}
	return &opened{store: store, opts: opts, close: func() {
		_ = warehouses.Close()
		store.Close()
	}}, nil
}

// dsn is the store's DSN: --dsn, else BOLLHAV_DSN ("" for the default
// file beside the spec).
func (c *cmdContext) dsn() string {
	if c.flagGiven("dsn") {
		return c.DSN
	}
	return os.Getenv("BOLLHAV_DSN")
}

// registersOrRuns are the commands that register the spec or run it.
var registersOrRuns = map[string]bool{"apply": true, "run": true, "worker": true}

// runsData are the commands that run models, and so need every data
// model's connection variable set.
var runsData = map[string]bool{"run": true, "worker": true}
