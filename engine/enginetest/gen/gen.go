// Package gen builds a synthetic but realistic bollhav project at production
// scale — a thousand models in pipelines and a million units of state — for
// the benchmarks of the engine, the stores and the UI. The same Config gives
// the same spec and the same state, byte for byte, so a figure measured on
// one machine can be reproduced on another.
//
// The project: models spread over pipelines of about twenty, each pipeline
// layered raw → stg → core → mart; mixed grains (15m, 1h, 1d, 1w, 1mo, some
// days counted in Europe/Stockholm), fixed and flexible chunking, a few
// timeless models and a few fixed models with a chunking end. Every model but
// the roots reads one to three gated upstreams over all five contract levels,
// some with a freshness limit. The state has the shapes production has:
// pending tails not run yet, holes of pending, failed and blocked units,
// blocked units downstream of an upstream's holes, a few running units
// under a lease, backfilled history and stale units (applied before an
// upstream re-applied the rows they read).
//
// The state is written only through the public state.Store API, so the
// generator works on every backend and puts no SQL outside the stores: into
// an empty store in one bulk copy (state.StoreCopier, as `bollhav store
// copy` fills one; copy.go), into any other with Prefill, SetStatus and
// Claim.
package gen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// AsOf is the engine time the generated state describes: every model's
// contract range ends at its last window completed by AsOf, and every
// applied_at is before it. Gate the generated state at AsOf (Populate sets
// the engine's clock to it) or a later clock finds windows that no unit
// covers yet.
var AsOf = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// SpecFile is the file name the generated spec is parsed under, as error
// positions and Spec.Path show it.
const SpecFile = "bollhav.yaml"

// Config sizes a generated project.
type Config struct {
	// Models is the number of models (1000 is the design point).
	Models int
	// Units is the number of units the state holds, give or take a few
	// per cent (1,000,000 is the design point).
	Units int
	// Seed picks the project; the same Config always gives the same one.
	Seed int64
}

// Summary is what Populate wrote.
type Summary struct {
	// AsOf is the time the state describes (the package's AsOf).
	AsOf time.Time
	// Models is the number of models registered.
	Models int
	// Units counts the units written, by status, every status present as
	// a key.
	Units  int
	Counts map[state.UnitStatus]int
	// Stale counts applied units that a gated upstream re-applied after
	// them: an applied row of an EXACT, ENCAPSULATE or THROUGH upstream
	// overlapping the unit's window has a newer applied_at than the unit.
	Stale int
	// Levels counts the gated edges by contract level.
	Levels map[spec.ContractLevel]int
	// Elapsed is how long writing the state took (apply included).
	Elapsed time.Duration
}

// Spec returns the generated project's bollhav.yaml.
func Spec(cfg Config) []byte {
	return renderSpec(layout(cfg))
}

// Populate writes the generated project into s and returns an engine over
// s with opts for it: its spec is the one parsed from Spec(cfg), which is
// applied (Engine.Apply) to opts.Env, and its clock is opts.Now, or AsOf
// when that is nil, so the engine sees the state as it was generated. The
// store's environment must hold none of the project's models yet.
//
// An empty store is filled in one bulk copy. Any other is written one
// transaction per model and per run of units that share a status, about
// 10,000 for a million units; on PostgreSQL each is a commit, so open the
// store being populated with synchronous_commit=off in its DSN (pgx passes
// it to the server) unless the disk flushes fast: the data is a fixture,
// and a flush per commit would dominate.
func Populate(ctx context.Context, s state.Store, opts engine.Options, cfg Config) (*engine.Engine, Summary, error) {
	started := time.Now()
	p := layout(cfg)
	e, err := setUp(s, opts, p)
	if err != nil {
		return nil, Summary{}, err
	}
	plan := planState(p, cfg.Seed)
	err = populateByCopy(ctx, s, e.Env().Suffix, p, plan, func(scratch state.Store) error {
		_, err := engine.New(scratch, e.Spec(), projectOptions(opts)).Apply(ctx)
		return err
	})
	if errors.Is(err, errNoCopy) {
		if _, err := e.Apply(ctx); err != nil {
			return nil, Summary{}, fmt.Errorf("gen: apply: %w", err)
		}
		err = writeState(ctx, s, e.Env().Suffix, p, plan)
	}
	if err != nil {
		return nil, Summary{}, fmt.Errorf("gen: writing the state: %w", err)
	}
	sum := summarize(p, plan)
	sum.Elapsed = time.Since(started)
	return e, sum, nil
}

// Seed is Populate without an engine, for the packages an engine's tests
// depend on (the gate): it writes cfg's project into env of s — the spec
// registered as the engine's Apply registers it (spec.ModelRecord,
// spec.EdgeRecords, one Register call at AsOf, not audited), then the
// state — and returns the parsed spec. Gate the state at AsOf.
func Seed(ctx context.Context, s state.Store, env string, cfg Config) (*spec.Spec, Summary, error) {
	started := time.Now()
	p := layout(cfg)
	sp, err := spec.Parse(SpecFile, renderSpec(p))
	if err != nil {
		return nil, Summary{}, fmt.Errorf("gen: the generated spec does not parse: %w", err)
	}
	recs := make([]state.ModelRecord, 0, len(sp.Models))
	var edges []state.EdgeRecord
	for _, m := range sp.Models {
		recs = append(recs, spec.ModelRecord(env, m, state.Interval{}))
		edges = append(edges, spec.EdgeRecords(env, sp, m)...)
	}
	plan := planState(p, cfg.Seed)
	err = populateByCopy(ctx, s, env, p, plan, func(scratch state.Store) error {
		_, err := scratch.Register(ctx, env, recs, edges, AsOf)
		return err
	})
	if errors.Is(err, errNoCopy) {
		if _, err := s.Register(ctx, env, recs, edges, AsOf); err != nil {
			return nil, Summary{}, fmt.Errorf("gen: register: %w", err)
		}
		err = writeState(ctx, s, env, p, plan)
	}
	if err != nil {
		return nil, Summary{}, fmt.Errorf("gen: writing the state: %w", err)
	}
	sum := summarize(p, plan)
	sum.Elapsed = time.Since(started)
	return sp, sum, nil
}

// Attach returns the engine Populate returned for s, opts and cfg's
// project earlier — its spec, and its clock at AsOf when opts has none —
// with the Summary Populate returned then, without writing: a benchmark at
// ten million units keeps its fixture between runs instead of generating
// it for an hour each time. The store may have moved on since (earlier
// runs changed units); the summary is the project as generated.
func Attach(s state.Store, opts engine.Options, cfg Config) (*engine.Engine, Summary, error) {
	p := layout(cfg)
	e, err := setUp(s, opts, p)
	if err != nil {
		return nil, Summary{}, err
	}
	return e, summarize(p, planState(p, cfg.Seed)), nil
}

// setUp returns an engine over s with the project's spec and opts, its
// clock at AsOf when opts has none.
func setUp(s state.Store, opts engine.Options, p *project) (*engine.Engine, error) {
	sp, err := spec.Parse(SpecFile, renderSpec(p))
	if err != nil {
		return nil, fmt.Errorf("gen: the generated spec does not parse: %w", err)
	}
	return engine.New(s, sp, projectOptions(opts)), nil
}

// projectOptions are opts as the project's engines run with them: the
// clock at AsOf when opts has none, and lint errors allowed — starts are
// drawn at random, so some gated upstreams start after their downstream
// (lint's upstream-starts-later): the gate's hard cases, on purpose. The
// project is registered knowingly.
func projectOptions(opts engine.Options) engine.Options {
	if opts.Now == nil {
		opts.Now = func() time.Time { return AsOf }
	}
	opts.AllowLintErrors = true
	return opts
}
