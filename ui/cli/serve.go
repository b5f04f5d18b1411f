package cli

import (
	"cmp"
	gocontext "context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"github.com/spf13/pflag"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/ui"
	"github.com/bollhav/bollhav/ui/serve"
)

func init() {
	var f serveFlags
	register(&command{
		name:    "serve",
		summary: "the UI over SSH, for on-call: public keys only, operators and viewers",
		long: `serve --ssh ADDR serves the terminal UI over SSH. Each session runs its own UI
(its own window size and colours) over one engine and store connection pool.

Authentication is by public key only, from two OpenSSH authorized_keys files,
re-read on every connection (a removed key is refused on its next one):
--operators may run, reset and mark; --viewers get the read-only UI, and the
engine refuses (and audits) their actions too. The key options from=,
expiry-time=, no-pty and restrict are honoured; any other restricting option
(command=, environment=, …) is refused at start, naming the file and line.
Every action is audited as "ssh:SHA256:<key fingerprint> USER", the user name
cleaned and quoted. The host key is an ed25519 key created on
first start in --state-dir (mode 0600) and reused after.

SIGINT/SIGTERM: every session is told goodbye, runs started from the UI
release their claims, and the server stops.`,
		examples: []string{
			"bollhav serve --ssh :2222 --operators ~/.bollhav/operators --viewers ~/.bollhav/viewers",
			"ssh -p 2222 oncall@bollhav.internal",
		},
		flags: func(fs *pflag.FlagSet) {
			f = serveFlags{}
			fs.StringVar(&f.addr, "ssh", "", "address to listen on, host:port (required)")
			fs.StringVar(&f.operators, "operators", "", "authorized_keys file of operators (full UI)")
			fs.StringVar(&f.viewers, "viewers", "", "authorized_keys file of viewers (read-only UI)")
			fs.StringVar(&f.stateDir, "state-dir", "", "where the host key lives (default .bollhav beside the spec)")
			fs.DurationVar(&f.idle, "idle-timeout", 30*time.Minute, "close a session idle this long")
			fs.IntVar(&f.maxSessions, "max-sessions", 32, "refuse sessions beyond this many at once")
		},
		run: func(c *cmdContext, args []string) int { return runServe(c, f, args) },
	})
}

type serveFlags struct {
	addr, operators, viewers, stateDir string
	idle                               time.Duration
	maxSessions                        int
}

func runServe(c *cmdContext, f serveFlags, args []string) int {
	const cmd = "serve"
	switch {
	case len(args) > 0:
		return c.fail(cmd, &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	case f.addr == "":
		return c.fail(cmd, &usageError{"--ssh ADDR is required (e.g. --ssh :2222)"})
	case f.operators == "" && f.viewers == "":
		return c.fail(cmd, &usageError{"give --operators and/or --viewers: authorized_keys files of who may connect"})
	case f.maxSessions < 1:
		return c.fail(cmd, &usageError{"--max-sessions must be at least 1"})
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return c.fail(cmd, &usageError{fmt.Sprintf("--ssh %q: %v", f.addr, err)})
	}
	ctx, stop := signal.NotifyContext(gocontext.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, closeStore, code := c.openEngine(ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	e.ReadOnly = c.ReadOnly
	logger := slog.New(slog.NewTextHandler(c.Err, nil))
	feed, err := ui.NewFeed(ctx, e, 0)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return ExitUsage
	}
	stateDir := cmp.Or(f.stateDir, filepath.Join(filepath.Dir(c.Spec), ".bollhav"))
	srv, err := serve.New(serve.Config{
		Addr: f.addr, StateDir: stateDir, Keys: serve.Keys{Operators: f.operators, Viewers: f.viewers},
		Engine: e, IdleTimeout: f.idle, MaxSessions: f.maxSessions, Log: logger,
		NewModel: func(ctx gocontext.Context, se *engine.Engine, s ssh.Session) (tea.Model, error) {
			env := sessionEnv(s.Environ())
			return ui.NewModel(ctx, se, ui.Options{Theme: c.Theme, ReadOnly: se.ReadOnly, Getenv: env, Feed: feed})
		},
	})
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return ExitUsage
	}
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: %v\n", err)
		return ExitUsage
	}
	fmt.Fprintf(c.Err, "bollhav serve: listening on %s (host key %s)\n", l.Addr(), srv.HostKeyPath)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
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
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(c.Err, "bollhav serve: shutdown: %v\n", err)
		return ExitFailure
	}
	return ExitOK
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
