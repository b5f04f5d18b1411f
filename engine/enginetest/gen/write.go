package gen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// writeState writes the plan through the Store API: each model's units in
// one Prefill, then one SetStatus per run of units that share a status (and
// an applied_at), then a Claim for the units a worker holds. Models are
// written by a few goroutines at once: PostgreSQL commits them in parallel,
// and SQLite serialises its writers itself.
func writeState(ctx context.Context, s state.Store, env string, p *project, plans []modelPlan) error {
	workers := 2
	if s.Backend() == "postgres" {
		workers = 6
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := writeModel(ctx, s, env, p.models[i], plans[i].units); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := range p.models {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

func writeModel(ctx context.Context, s state.Store, env string, m *modelDef, us []unitPlan) error {
	if len(us) == 0 {
		return nil
	}
	ws := make([]state.Window, len(us))
	for i, u := range us {
		ws[i] = u.window()
	}
	n, err := s.Prefill(ctx, state.PrefillRequest{Env: env, Model: m.name, Windows: ws, Now: AsOf})
	if err != nil {
		return fmt.Errorf("prefill %s: %w", m.name, err)
	}
	if n != len(us) {
		return fmt.Errorf("prefill %s created %d units, want %d", m.name, n, len(us))
	}
	for i := 0; i < len(us); {
		j := i + 1
		for j < len(us) && us[j].st == us[i].st && us[j].at == us[i].at {
			j++
		}
		if err := writeRun(ctx, s, env, m, us[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// writeRun moves a run of consecutive pending units that share a planned
// status (and applied_at) to it in one call. The run's hull holds no other
// unit, because a model's units do not overlap.
func writeRun(ctx context.Context, s state.Store, env string, m *modelDef, run []unitPlan) error {
	hull := state.Window{}
	if !m.timeless {
		hull = state.Window{Since: fromMicros(run[0].since), Until: fromMicros(run[len(run)-1].until)}
	}
	to := statusOf[run[0].st]
	switch run[0].st {
	case pending:
		return nil
	case running:
		cs, err := s.Claim(ctx, state.ClaimRequest{Env: env, Models: []string{m.name}, Window: hull, Worker: "gen-worker",
			Lease: 24 * time.Hour, Limit: len(run), Now: AsOf})
		if err != nil {
			return fmt.Errorf("claim %s %s: %w", m.name, hull, err)
		}
		if len(cs) != len(run) {
			return fmt.Errorf("claim %s %s took %d units, want %d", m.name, hull, len(cs), len(run))
		}
		return nil
	}
	req := state.StatusChange{Env: env, Model: m.name, Window: hull, From: []state.UnitStatus{state.Pending}, To: to, Now: AsOf}
	if to == state.Applied {
		req.AppliedAt = fromMicros(run[0].at)
	}
	moved, err := s.SetStatus(ctx, req)
	if err != nil {
		return fmt.Errorf("set %s %s to %s: %w", m.name, hull, to, err)
	}
	if moved != len(run) {
		return fmt.Errorf("set %s %s to %s moved %d units, want %d", m.name, hull, to, moved, len(run))
	}
	return nil
}
