package gen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// Writing the state one transaction per run of units costs about 10,000
// commits per million units: at ten million, ten minutes on SQLite and
// twenty to sixty on PostgreSQL. An empty store that bollhav can copy into
// (state.StoreCopier, what `bollhav store copy` fills) takes the whole
// project in one bulk copy instead: the registrations are made in a
// scratch SQLite file by the same calls the slow path makes (the engine's
// Apply, or Register), and that file is copied into the store with the
// planned units added to the copy. The units read back the same either
// way (TestPopulateByCopyWritesWhatTheStoreAPIWrites); what differs is
// what no benchmark reads: the change feed starts empty (a copy starts its
// own), and the unit ids are numbered in plan order.

// errNoCopy says the store cannot take the project in one copy: it is not
// a StoreCopier, or it already holds state. The caller writes through the
// Store API instead.
var errNoCopy = errors.New("gen: the store cannot be filled by a copy")

// populateByCopy fills the empty store s with the project: register writes
// the registrations into the scratch store it is given, then the scratch
// store's content and the planned units are copied into s in one
// transaction. It returns errNoCopy, having written nothing, when s is not
// empty or cannot be copied into.
func populateByCopy(ctx context.Context, s state.Store, env string, p *project, plans []modelPlan, register func(scratch state.Store) error) error {
	dst, ok := s.(state.StoreCopier)
	if !ok {
		return errNoCopy
	}
	w, err := dst.CopyIn(ctx, state.CopyInOptions{})
	var full *state.NotEmptyError
	if errors.As(err, &full) {
		return errNoCopy
	}
	if err != nil {
		return fmt.Errorf("gen: copy: %w", err)
	}
	dir, err := os.MkdirTemp("", "bollhav-gen-")
	if err != nil {
		return errors.Join(err, w.Rollback())
	}
	defer os.RemoveAll(dir)
	scratch, err := sqlite.Open(ctx, filepath.Join(dir, "registrations.db"))
	if err != nil {
		return errors.Join(fmt.Errorf("gen: scratch store: %w", err), w.Rollback())
	}
	defer scratch.Close()
	if err := register(scratch); err != nil {
		return errors.Join(err, w.Rollback())
	}
	// CopyOut rolls w back on any error of its own or of w's.
	if err := scratch.CopyOut(ctx, &plannedUnits{CopyWriter: w, env: env, p: p, plans: plans}, state.CopyOutOptions{}); err != nil {
		return fmt.Errorf("gen: copy: %w", err)
	}
	return nil
}

// plannedUnits passes a copy of the scratch store (registrations, no
// units) through to the target and adds the planned units where the copy's
// order has them: after the runs, before the attempts and the audit log.
type plannedUnits struct {
	state.CopyWriter
	env     string
	p       *project
	plans   []modelPlan
	written bool
}

func (w *plannedUnits) Attempt(unitID int64, a state.Attempt) error {
	if err := w.units(); err != nil {
		return err
	}
	return w.CopyWriter.Attempt(unitID, a)
}

func (w *plannedUnits) Audit(a state.AuditEntry) error {
	if err := w.units(); err != nil {
		return err
	}
	return w.CopyWriter.Audit(a)
}

func (w *plannedUnits) Commit(ctx context.Context) error {
	if err := w.units(); err != nil {
		return errors.Join(err, w.CopyWriter.Rollback())
	}
	return w.CopyWriter.Commit(ctx)
}

// units writes every planned unit once, model by model in window order
// (the order a copy rebuilds coverage in), as writeState leaves them: a
// running unit claimed by gen-worker under a day's lease, every other one
// moved from pending to its status at AsOf.
func (w *plannedUnits) units() error {
	if w.written {
		return nil
	}
	w.written = true
	var id int64
	lease := AsOf.Add(24 * time.Hour)
	for i, m := range w.p.models {
		for _, up := range w.plans[i].units {
			id++
			u := state.Unit{ID: id, Env: w.env, Model: m.name, Window: up.window(), Status: statusOf[up.st], UpdatedAt: AsOf}
			switch up.st {
			case applied:
				at := fromMicros(up.at)
				u.AppliedAt = &at
			case running:
				// As Claim leaves a unit never claimed before.
				u.Fence, u.LeaseOwner, u.LeaseUntil = 1, "gen-worker", &lease
			}
			if err := w.CopyWriter.Unit(u); err != nil {
				return err
			}
		}
	}
	return nil
}
