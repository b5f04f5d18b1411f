package cli

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/spf13/pflag"
)

func init() {
	var workers int
	var lease time.Duration
	register(&command{
		name:    "worker",
		summary: "claim and execute pending units until stopped (several may run against one store)",
		globals: []string{gSpec, gDSN, gEnv, gReadOnly, gAllowLint},
		long: `worker runs the spec's models: it claims pending units under a lease, gates
each against its upstreams, executes it and records the outcome, until SIGINT or
SIGTERM; then it takes no new work and lets the units it holds finish. A worker
that dies leaves leases that expire, and its units run again elsewhere.

Models on a connection (connection: {dsn_env_var: NAME}) write their data in
that warehouse: a worker whose environment lacks $NAME exits 2 naming it
before it claims anything. A unit whose data committed in the warehouse but
whose worker died before the store recorded it is recorded applied from the
warehouse's ledger by the next claim, without running again.`,
		examples: []string{
			"bollhav worker --workers 4 --dsn postgres://bollhav@db/warehouse",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&workers, "workers", 1, "units to run at once")
			fs.DurationVar(&lease, "lease", engine.DefaultLease, "how long a claim holds a unit without a heartbeat")
		},
		run: func(c *cmdContext, args []string) int { return runWorker(c, args, workers, lease) },
		// A signal is how a worker is stopped: it exits 0.
		ownsSignals: true,
	})
}

func runWorker(c *cmdContext, args []string, workers int, lease time.Duration) int {
	if len(args) > 0 {
		return c.fail("worker", &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	}
	if workers < 1 || lease < time.Second {
		return c.fail("worker", &usageError{"--workers must be at least 1 and --lease at least 1s"})
	}
	if err := engine.CheckWorkers(workers); err != nil {
		return c.fail("worker", &usageError{err.Error()})
	}
	if c.AsOf != "" {
		// A worker records outcomes and load times: made-up ones would
		// mislead freshness and the runs that count other workers' units.
		return c.fail("worker", &usageError{"--as-of does not apply to worker: a worker executes and records load times now"})
	}
	ctx := c.ctx
	o, sp, code := c.openSpecStore(ctx, "worker")
	if o == nil {
		return code
	}
	defer o.close()
	log := slog.New(slog.NewTextHandler(c.Err, nil))
	o.opts.Lease, o.opts.Log = lease, log
	e := o.engine(sp)
	if _, err := e.Apply(ctx); err != nil {
		fmt.Fprintf(c.Err, "bollhav worker: %v\n", err)
		return ExitUsage
	}
	log.Info("worker started", "env", e.Env().String(), "workers", workers, "lease", lease.String())
	if err := e.Work(ctx, e.Executor(), engine.WorkOptions{Workers: workers}); err != nil {
		fmt.Fprintf(c.Err, "bollhav worker: %v\n", err)
		return ExitUsage
	}
	log.Info("worker stopped")
	return ExitOK
}
