package cli

import (
	"cmp"
	gocontext "context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"github.com/spf13/pflag"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/ui/serve"
	"github.com/bollhav/bollhav/ui/tui"
)

func init() {
	var f serveFlags
	register(&command{
		name:    "serve",
		args:    "--ssh ADDR and/or --metrics ADDR",
		summary: "the UI over SSH, and Prometheus metrics, for on-call",
		globals: []string{gSpec, gDSN, gEnv, gReadOnly, gAllowLint, gTheme},
		long: `serve --ssh ADDR serves the terminal UI over SSH; serve --metrics ADDR serves
Prometheus metrics and health checks over HTTP. Give either or both. Each SSH
session runs its own UI (its own window size and colours) over one engine and
store connection pool.

Authentication is by public key only, from two OpenSSH authorized_keys files,
re-read on every connection (a removed key is refused on its next one):
--operators may run, reset and mark; --viewers get the read-only UI, and the
engine refuses (and audits) their actions too. The key options from=,
expiry-time=, no-pty and restrict are honoured; any other restricting option
(command=, environment=, …) is refused at start, naming the file and line.
Every action is audited as "ssh:SHA256:<key fingerprint> USER", the user name
cleaned and quoted. The host key is an ed25519 key created on
first start in --state-dir (mode 0600) and reused after.

--metrics ADDR answers on HTTP:
  /metrics  Prometheus text (OpenMetrics when asked): units by model, pipeline
            and status, blocked units, open incidents and what each holds,
            freshness lag and limit, run and unit durations, claims, retries,
            lease expiries, store errors, build info. A scrape never reads the
            store: the gauges are refreshed in the background (every 5 s when
            the change feed shows a change, every minute in any case), and the
            counters count what the change feed shows from the start of serve.
  /healthz  200 "ok" while the process is up.
  /readyz   200 "ready" when the store can be read and is at the schema
            version serve started with; otherwise 503 and one line why.
docs/oncall.md lists every metric and example alerting rules.

A session with no key pressed for --idle-timeout is closed, after a banner a
minute ahead says so (any key keeps it); one only watching a live view (the
change feed live, no dialog open) stays, unless --idle-closes-watchers. The
header shows who each session is and its role ("alice (viewer)").

SIGINT/SIGTERM: every session is told goodbye, runs started from the UI
release their claims, and the server stops.`,
		examples: []string{
			"bollhav serve --ssh :2222 --operators ~/.bollhav/operators --viewers ~/.bollhav/viewers",
			"bollhav serve --metrics :9464",
			"bollhav serve --ssh :2222 --viewers ~/.bollhav/viewers --metrics 127.0.0.1:9464",
			"ssh -p 2222 oncall@bollhav.internal",
			"curl -s localhost:9464/metrics | grep bollhav_units",
		},
		flags: func(fs *pflag.FlagSet) {
			f = serveFlags{}
			fs.StringVar(&f.addr, "ssh", "", "address to serve the UI over SSH on, host:port")
			fs.StringVar(&f.metrics, "metrics", "", "address to serve /metrics, /healthz and /readyz on over HTTP, host:port")
			fs.StringVar(&f.operators, "operators", "", "authorized_keys file of operators (full UI)")
			fs.StringVar(&f.viewers, "viewers", "", "authorized_keys file of viewers (read-only UI)")
			fs.StringVar(&f.stateDir, "state-dir", "", "where the host key lives (default .bollhav beside the spec)")
			fs.DurationVar(&f.idle, "idle-timeout", 30*time.Minute, "close a session with no key pressed this long, after a warning a minute before (0: never); one only watching a live view stays")
			fs.BoolVar(&f.idleWatchers, "idle-closes-watchers", false, "let --idle-timeout close a session that is only watching a live view too")
			fs.IntVar(&f.maxSessions, "max-sessions", 32, "refuse sessions beyond this many at once")
		},
		run: func(c *cmdContext, args []string) int { return runServe(c, f, args) },
		// A signal shuts the server down gracefully: it exits 0.
		ownsSignals: true,
	})
}

type serveFlags struct {
	addr, metrics, operators, viewers, stateDir string
	idle                                        time.Duration
	idleWatchers                                bool
	maxSessions                                 int
}

func runServe(c *cmdContext, f serveFlags, args []string) int {
	const cmd = "serve"
	switch {
	case len(args) > 0:
		return c.fail(cmd, &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	case f.addr == "" && f.metrics == "":
		return c.fail(cmd, &usageError{"give --ssh ADDR (the UI over SSH, e.g. --ssh :2222) and/or --metrics ADDR (Prometheus metrics, e.g. --metrics :9464)"})
	case f.addr != "" && f.operators == "" && f.viewers == "":
		return c.fail(cmd, &usageError{"give --operators and/or --viewers: authorized_keys files of who may connect"})
	case f.maxSessions < 1:
		return c.fail(cmd, &usageError{"--max-sessions must be at least 1"})
	case f.idle < 0:
		return c.fail(cmd, &usageError{fmt.Sprintf("--idle-timeout %s is negative: give a length, or 0 for never", f.idle)})
	}
	if f.addr != "" {
		if _, _, err := net.SplitHostPort(f.addr); err != nil {
			return c.fail(cmd, &usageError{fmt.Sprintf("--ssh %q: %v", f.addr, err)})
		}
	}
	// The metrics port is taken before the store is opened, so a port in
	// use or a bad address stops serve having touched nothing.
	var ml net.Listener
	if f.metrics != "" {
		var err error
		if ml, err = listenMetrics(f.metrics); err != nil {
			return c.fail(cmd, err)
		}
		defer ml.Close()
	}
	ctx := c.ctx
	e, closeStore, code := c.openEngine(ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	// --read-only is the engine's already (openStore).
	logger := slog.New(slog.NewTextHandler(c.Err, nil))
	errc := make(chan error, 2)
	var shutdowns []func(gocontext.Context) error
	if ml != nil {
		shutdown, err := startMetrics(ctx, e, ml, logger, errc)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav serve: %s\n", oneLine(err.Error()))
			return ExitUsage
		}
		defer shutdown(gocontext.Background()) // idempotent; the early returns below need it
		shutdowns = append(shutdowns, shutdown)
		fmt.Fprintf(c.Err, "bollhav serve: metrics on http://%s/metrics (and /healthz, /readyz)\n", ml.Addr())
	}
	if f.addr != "" {
		srv, code := startSSH(ctx, c, f, e, logger, errc)
		if srv == nil {
			return code
		}
		// The SSH server first: its sessions say goodbye and release their
		// runs' claims while /readyz still answers.
		shutdowns = append([]func(gocontext.Context) error{srv.Shutdown}, shutdowns...)
	}
	select {
	case err := <-errc:
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	case <-ctx.Done():
	}
	fmt.Fprintln(c.Err, "bollhav serve: shutting down")
	sctx, cancel := gocontext.WithTimeout(gocontext.Background(), 30*time.Second)
	defer cancel()
	for _, shutdown := range shutdowns {
		if err := shutdown(sctx); err != nil {
			fmt.Fprintf(c.Err, "bollhav serve: shutdown: %v\n", err)
			return ExitFailure
		}
	}
	return ExitOK
}

// startSSH starts the UI over SSH on f.addr; its Serve's end goes to errc.
// On failure it prints one line and returns a nil server and the exit code.
func startSSH(ctx gocontext.Context, c *cmdContext, f serveFlags, e *engine.Engine, logger *slog.Logger, errc chan<- error) (*serve.Server, int) {
	feed, err := tui.NewFeed(ctx, e, 0)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return nil, ExitUsage
	}
	stateDir := cmp.Or(f.stateDir, filepath.Join(filepath.Dir(c.Spec), ".bollhav"))
	srv, err := serve.New(serve.Config{
		Addr: f.addr, StateDir: stateDir, Keys: serve.Keys{Operators: f.operators, Viewers: f.viewers},
		Engine: e, MaxSessions: f.maxSessions, Log: logger,
		NewModel: func(ctx gocontext.Context, se *engine.Engine, s ssh.Session) (tea.Model, error) {
			env := sessionEnv(s.Environ())
			return tui.NewModel(ctx, se, tui.Options{Theme: c.Theme, ReadOnly: se.ReadOnly(), Getenv: env, Feed: feed,
				User: serve.SessionUser(s), Role: serve.SessionRole(s).String(),
				IdleTimeout: f.idle, IdleClosesWatchers: f.idleWatchers})
		},
	})
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return nil, ExitUsage
	}
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return nil, ExitUsage
	}
	fmt.Fprintf(c.Err, "bollhav serve: listening on %s (host key %s)\n", l.Addr(), srv.HostKeyPath)
	fmt.Fprintf(c.Err, "bollhav serve: host key fingerprint %s: a client's first ssh asks to trust it; compare\n", srv.HostKey)
	go func() { errc <- srv.Serve(l) }()
	return srv, ExitOK
}

// sessionEnv reads a session's environment (NO_COLOR, TERM) rather than
// the server's.
func sessionEnv(environ []string) func(string) string {
	m := map[string]string{}
	for _, kv := range environ {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return func(k string) string { return m[k] }
}
