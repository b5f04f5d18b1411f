package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// runAudit records one run in the audit log exactly once, whatever its
// STATE_MODE: when it starts executing — who ran what, and the state
// changes its plan made (resets, deletes) — or, when it stops before that,
// with the error that stopped it. It is written at the start rather than
// the end so a long backfill is in the log while it goes on, and one a
// crash ends is there at all; how the run ended is the run's own record
// (the runs view, run_id in the entry's arguments). The implicit
// registration of the spec ahead of a run adds an entry of its own only
// when it changed something (Engine.apply).
type runAudit struct {
	e        *Engine
	ctx      context.Context
	at       time.Time
	action   string
	args     map[string]string
	recorded bool
}

// newRunAudit starts the audit of a run (action "run") or a retry.
func (e *Engine) newRunAudit(ctx context.Context, action string, args map[string]string) *runAudit {
	args["env"] = e.opts.Env.Suffix
	return &runAudit{e: e, ctx: context.WithoutCancel(ctx), at: e.now(), action: action, args: args}
}

// started records the run as started ("discover run 7 started"), with the
// changes its plan made.
func (a *runAudit) started(runID int64, what string, done []string) error {
	a.args["run_id"] = strconv.FormatInt(runID, 10)
	outcome := "ok: " + what
	if len(done) > 0 && !(len(done) == 1 && done[0] == "nothing to change") {
		outcome += "; " + strings.Join(done, "; ")
	}
	return a.record(outcome)
}

// failed records err as the outcome, with the changes made before it,
// unless the run was recorded already (an error while it executes is the
// run's record, not the audit's).
func (a *runAudit) failed(runID int64, err error, done []string) {
	if a.recorded || err == nil {
		return
	}
	if runID > 0 {
		a.args["run_id"] = strconv.FormatInt(runID, 10)
	}
	outcome := "error: " + err.Error()
	if len(done) > 0 {
		outcome += " (done before it: " + strings.Join(done, "; ") + ")"
	}
	if aerr := a.record(outcome); aerr != nil {
		a.e.logger().Warn("could not record a failed run in the audit log", "err", aerr)
	}
}

func (a *runAudit) record(outcome string) error {
	a.recorded = true
	err := a.e.store.Audit(a.ctx, state.AuditEntry{At: a.at, Actor: a.e.opts.Actor, Action: a.action, Args: a.args, Outcome: outcome})
	if err != nil {
		return fmt.Errorf("recording the %s in the audit log: %w", a.action, err)
	}
	return nil
}
