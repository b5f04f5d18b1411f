package cli

import (
	gocontext "context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/stores"
)

// openEngine loads the spec, opens the store the DSN names (--dsn, else
// BOLLHAV_DSN, else .bollhav/state.db beside the spec) and returns an engine
// over both for the environment of --env (else SCHEMA_SUFFIX). On failure it
// prints one clear line — never a password — and returns the exit code.
func (c *cmdContext) openEngine(ctx gocontext.Context, cmd string) (*engine.Engine, func(), int) {
	sp, code := c.loadSpec(cmd)
	if sp == nil {
		return nil, nil, code
	}
	if registersOrRuns[cmd] {
		// Refused before the store is even opened: a spec lint proves
		// wrong leaves no registration, run row, unit or store file.
		if err := engine.RefuseLintErrors(sp); err != nil {
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
	e, closeStore, err := c.storeEngine(ctx)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
		return nil, nil, ExitUsage
	}
	e.Spec = sp
	return e, closeStore, ExitOK
}

// storeEngine opens the store the DSN names and returns an engine over it
// for the environment of --env, at --as-of when given, with no spec yet;
// its error is for the caller to print (after a spec's problems, which
// come first).
func (c *cmdContext) storeEngine(ctx gocontext.Context) (*engine.Engine, func(), error) {
	_, _, env, err := engine.ResolveRunSettings(engine.RunFlags{Env: c.Env, EnvGiven: c.flagGiven("env")}, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	specDir := filepath.Dir(c.Spec)
	store, _, err := stores.Open(ctx, c.dsn(), specDir, stores.Options{PostgresSchema: os.Getenv("BOLLHAV_PG_SCHEMA")})
	if err != nil {
		return nil, nil, err
	}
	// The warehouse pools models' connections name: opened on first use
	// with the backends this composition root knows, and closed here, with
	// the store, when the command is done. The engine closes neither.
	warehouses := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	e := &engine.Engine{Store: store, SpecDir: specDir, Env: env, ReadOnly: c.ReadOnly, Actor: actor(), Warehouses: warehouses}
	if c.AsOf != "" {
		// checkGlobals has parsed it already. Leases keep the wall clock
		// (engine.leaseClock); everything judged "now" uses this instant.
		at, _ := state.ParseTime(c.AsOf)
		e.Now = func() time.Time { return at }
	}
	return e, func() {
		// The warehouse pools this command opened for models'
		// connections end with the store.
		_ = warehouses.Close()
		store.Close()
	}, nil
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
