package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// holdBatch is how many units a held task blocks per transaction.
const holdBatch = 256

// holdUnits blocks the pending units of a task that will not run in this
// run — SKIPPED, or WAITING on another pipeline — with reason: every unit
// that is not applied and will not run now says why, in the store, where
// `blocked`, `incidents`, `why` and the UI read it, and a worker sharing
// the store does not run it behind the edge's back. A later run that takes
// the task re-judges them (discover and bulldozer re-pend blocked units).
// It returns how many it blocked; units another worker holds are left to
// it.
func (e *Engine) holdUnits(ctx context.Context, runID int64, sc runScope, reason string) (int, error) {
	if reason == "" {
		return 0, nil
	}
	held := 0
	worker := workerName(runID)
	for {
		var claims []state.Claim
		err := e.retryStore(ctx, "hold units", func() (err error) {
			claims, err = e.store.Claim(ctx, state.ClaimRequest{Env: e.opts.Env.Suffix, Models: []string{sc.model.Name},
				Window: sc.window, Worker: worker, Lease: e.lease(), Limit: holdBatch, RunID: runID, Now: e.leaseNow()})
			return err
		})
		if err != nil || len(claims) == 0 {
			return held, err
		}
		items := make([]state.Completion, len(claims))
		for i, c := range claims {
			items[i] = state.Completion{Claim: c, Outcome: state.Outcome{Status: state.Blocked, BlockedReason: reason, At: e.now()}}
		}
		var errs []error
		err = e.retryStore(ctx, "hold units", func() (err error) {
			errs, err = e.store.CompleteBatch(ctx, items)
			return err
		})
		if err != nil {
			return held, err
		}
		for _, err := range errs {
			if err == nil {
				held++
			} else if !errors.Is(err, state.ErrLeaseLost) {
				return held, err
			}
		}
		if len(claims) < holdBatch {
			return held, nil
		}
	}
}

// skipReason says why the graph skipped task id: each of its same-pipeline
// edges that its upstream's outcome in this run does not satisfy, then what
// the cross-pipeline gate said (cross). byFailure reports whether an
// upstream that failed (or was itself skipped) lost an edge: a task
// skipped only because nothing failed — an alert on a FAILURE edge on a
// good day — has nothing to pick up once something is fixed.
func skipReason(g *graph.DependencyGraph, rs graph.RunState, byID map[int]runScope, runID int64, id int, cross string) (reason string, byFailure bool) {
	var why []string
	for _, dep := range g.DependenciesOf(id) {
		up := rs[dep.DependsOnTaskID]
		if up.Status == nil || !up.Status.Terminal() || graph.Satisfies(dep.Type, up) {
			continue
		}
		name := fmt.Sprintf("task %d", dep.DependsOnTaskID)
		if sc, ok := byID[dep.DependsOnTaskID]; ok {
			name = sc.model.Name
		}
		why = append(why, gate.AfterReason(name, dep.Type, gate.EndedDetail(up.Status.String(), runID)))
		byFailure = byFailure || *up.Status != graph.StatusSuccess
	}
	if cross != "" {
		why = append(why, cross)
	}
	return strings.Join(why, "; "), byFailure
}

// settledEdges are the verdicts of task id's same-pipeline edges in this
// run as it starts, by upstream model.
func settledEdges(g *graph.DependencyGraph, rs graph.RunState, byID map[int]runScope, runID int64, id int) map[string]gate.AfterVerdict {
	out := map[string]gate.AfterVerdict{}
	for _, dep := range g.DependenciesOf(id) {
		sc, ok := byID[dep.DependsOnTaskID]
		if !ok {
			continue
		}
		up := rs[dep.DependsOnTaskID]
		v := gate.AfterVerdict{Upstream: sc.model.Name, Edge: dep.Type, Run: runID, Satisfied: graph.Satisfies(dep.Type, up)}
		if up.Status != nil {
			v.Outcome = up.Status.String()
		}
		if !v.Satisfied {
			v.Reason = gate.AfterReason(sc.model.Name, dep.Type, gate.EndedDetail(v.Outcome, runID))
		}
		out[sc.model.Name] = v
	}
	return out
}

// failureEdgesOnly reports whether every explicit edge of m is a FAILURE
// edge: such a task is skipped only when nothing failed.
func failureEdgesOnly(m *spec.Model) bool {
	for _, a := range m.After {
		if a.On != graph.Failure {
			return false
		}
	}
	return len(m.After) > 0
}
