package cli

import (
	gocontext "context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/progress"
	"github.com/spf13/pflag"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/stores"
	"github.com/bollhav/bollhav/ui/untrusted"
)

func init() {
	var to, toSchema string
	var snapshot, yes bool
	register(&command{
		name:    "store",
		args:    "copy --to DSN",
		summary: "copy the state store into another (store copy --to DSN): move to PostgreSQL, or take a snapshot",
		globals: []string{gSpec, gDSN, gOutput, gReadOnly},
		long: `store copy copies the whole state — registrations, definition history, units,
runs, task and unit attempts, the audit log — from the store that --dsn (or the
default file beside the spec) opens into the empty store --to names, of either
backend, in one transaction: an interrupted copy leaves the target empty and
this store as it was. A target that already holds state is refused.

A move (the default) hands the store's identity over with the state, so
models on their own connection do not run again for windows already applied,
and retires this store: it records where it moved and refuses every write
(run, worker, apply, mark) from then on, naming the new store; reads keep
working. It is refused while units are running. On a terminal it asks for
"yes" first; elsewhere it needs --yes.

--snapshot copies without moving (a production store to inspect on a
laptop): the copy gets an identity of its own and refuses every write in the
store itself; this store goes on as before.

The data of models without a connection of their own lives in the state
store's database and is not copied; the command names such models.`,
		examples: []string{
			"bollhav store copy --to postgres://bollhav@db/state",
			"bollhav store copy --dsn postgres://ro@db/state --to sqlite:prod-snapshot.db --snapshot",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&to, "to", "", "the DSN of the empty store to copy into")
			fs.StringVar(&toSchema, "to-schema", "", "the PostgreSQL schema of the target (default bollhav)")
			fs.BoolVar(&snapshot, "snapshot", false, "copy without moving: a read-only snapshot with an identity of its own")
			fs.BoolVar(&yes, "yes", false, "move without asking (the source is retired)")
		},
		run: func(c *cmdContext, args []string) int {
			return runStoreCopy(c, args, storeCopyFlags{to: to, toSchema: toSchema, snapshot: snapshot, yes: yes})
		},
	})
}

type storeCopyFlags struct {
	to, toSchema  string
	snapshot, yes bool
}

func runStoreCopy(c *cmdContext, args []string, f storeCopyFlags) int {
	const cmd = "store copy"
	switch {
	case len(args) == 0 || args[0] != "copy":
		return c.fail("store", &usageError{"name what to do: bollhav store copy --to DSN"})
	case len(args) > 1:
		return c.fail("store", &usageError{fmt.Sprintf("unexpected argument %q", args[1])})
	case strings.TrimSpace(f.to) == "":
		return c.fail("store", &usageError{"--to is required: the DSN of the empty store to copy into"})
	}
	ctx := c.ctx
	specDir := filepath.Dir(c.Spec)
	src, err := state.ParseDSN(c.dsn(), specDir)
	if err != nil {
		return c.fail("store", err)
	}
	dst, err := state.ParseDSN(f.to, specDir)
	if err != nil {
		return c.fail("store", fmt.Errorf("--to: %w", err))
	}
	if src.Kind == dst.Kind && src.Kind == state.KindSQLite && sameFile(src.Path, dst.Path) {
		return c.fail("store", &usageError{"--to names the store being copied"})
	}
	e, closeStore, code := c.openCopySource(ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	// The target first: an unreachable one, or one of a newer bollhav, is
	// named before the operator is asked anything.
	target, _, err := stores.Open(ctx, f.to, specDir, stores.Options{PostgresSchema: f.toSchema})
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav %s: the target: %s\n", cmd, oneLine(err.Error()))
		return ExitUsage
	}
	defer target.Close()
	if !f.snapshot && !f.yes {
		if code, ok := c.confirmMove(ctx, src.Redacted(), dst.Redacted()); !ok {
			return code
		}
	}
	bar := c.newCopyBar()
	res, err := e.CopyStore(ctx, target, engine.CopyOptions{Snapshot: f.snapshot, Source: src.Redacted(), Target: dst.Redacted(), Progress: bar.show})
	bar.done()
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %s\n", cmd, oneLine(err.Error()))
		if errors.Is(err, gocontext.Canceled) {
			return ExitFailure
		}
		return ExitUsage
	}
	if c.Output == "json" {
		writeJSON(c.Out, storeCopyToJSON(res, src.Redacted(), dst.Redacted()))
		return ExitOK
	}
	printStoreCopy(c.Out, res, src.Redacted(), dst.Redacted())
	return ExitOK
}

// sameFile reports whether two SQLite paths name one file (one may not
// exist yet).
func sameFile(a, b string) bool {
	ia, erra := os.Stat(a)
	ib, errb := os.Stat(b)
	if erra == nil && errb == nil {
		return os.SameFile(ia, ib)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// openCopySource is openEngine for store copy, which needs no spec: with
// one beside it (the default) the engine knows which models keep their
// data in the store; without, the store alone is copied.
func (c *cmdContext) openCopySource(ctx gocontext.Context, cmd string) (*engine.Engine, func(), int) {
	if _, err := os.Stat(c.Spec); err == nil {
		return c.openEngine(ctx, cmd)
	}
	o, err := c.openStore(ctx)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav %s: %v\n", cmd, err)
		return nil, nil, ExitUsage
	}
	return o.engine(nil), o.close, ExitOK
}

// confirmMove asks for "yes" on a terminal before a move retires the
// source; without a terminal the move needs --yes.
func (c *cmdContext) confirmMove(ctx gocontext.Context, from, to string) (int, bool) {
	return c.askYes(ctx, "store copy", "move",
		"a move retires this store (it refuses every write afterwards) and needs confirmation, but stdin is not a terminal: pass --yes, or --snapshot to copy without moving",
		fmt.Sprintf("Move the state of %s to %s? %s will refuse every write afterwards.", from, to, from))
}

// copyBar draws the copy's progress on a terminal: a bar and the units
// copied, redrawn in place at most ten times a second. It draws on stdout,
// as run's live view does — stderr carries only others' words, cleaned
// (untrusted.Writer) — and only for text output; elsewhere nothing.
type copyBar struct {
	mu    sync.Mutex
	out   io.Writer
	bar   progress.Model
	last  time.Time
	drawn bool
}

func (c *cmdContext) newCopyBar() *copyBar {
	var out io.Writer
	if c.Output != "json" && runIsTerminal(c.Out) {
		out = colorWriter(c.Out) // NO_COLOR and the terminal's colours, as run's view
	}
	return newCopyBar(out)
}

// newCopyBar draws on out; nil draws nothing.
func newCopyBar(out io.Writer) *copyBar {
	return &copyBar{out: out, bar: progress.New(progress.WithWidth(40), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))}
}

func (b *copyBar) show(done, total int64) {
	if b.out == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond || done == total {
		b.last = now
		p := 1.0
		if total > 0 {
			p = float64(done) / float64(total)
		}
		fmt.Fprintf(b.out, "\r%s %s/%s units", b.bar.ViewAs(p), thousands(done), thousands(total))
		b.drawn = true
	}
}

// done ends the bar's line.
func (b *copyBar) done() {
	if b.drawn {
		fmt.Fprintln(b.out)
	}
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// copyKinds are CopyResult.Rows' kinds in the order they are printed,
// with their words.
var copyKinds = []struct{ key, word string }{
	{"models", "models"}, {"edges", "edges"}, {"definitions", "definitions"}, {"units", "units"},
	{"attempts", "unit attempts"}, {"runs", "runs"}, {"task_runs", "task attempts"}, {"audit", "audit rows"},
}

func printStoreCopy(w io.Writer, res *engine.CopyResult, from, to string) {
	if res.Finished {
		fmt.Fprintf(w, "%s already holds this store's copy (an earlier store copy committed it but did not retire this store): retired %s now\n", to, from)
		fmt.Fprintf(w, "this store refuses every write from now on; point --dsn at %s\n", to)
		return
	}
	parts := make([]string, 0, len(copyKinds))
	for _, k := range copyKinds {
		parts = append(parts, thousands(res.Rows[k.key])+" "+k.word)
	}
	fmt.Fprintf(w, "copied %s to %s in %s: %s\n", from, to, roundDuration(res.Elapsed), strings.Join(parts, ", "))
	if res.Snapshot {
		fmt.Fprintf(w, "%s is a read-only snapshot with an identity of its own (%s); this store goes on as before\n", to, res.Identity)
	} else {
		fmt.Fprintf(w, "moved: %s holds this store's identity (%s); this store refuses every write from now on; point --dsn at %s\n", to, res.Identity, to)
	}
	if n := len(res.DataStaysBehind); n > 0 {
		names := res.DataStaysBehind
		more := ""
		if n > 5 {
			names, more = names[:5], fmt.Sprintf(" and %d more", n-5)
		}
		clean := make([]string, len(names))
		for i, m := range names {
			clean[i] = untrusted.Line(m)
		}
		fmt.Fprintf(w, "data stays behind: %d model%s keep their data in the state store's own database, which a copy of the state does not take (%s%s);\n"+
			"  in %s their units are applied but their tables are not there: rebuild them there with bollhav run MODEL --mode torch\n",
			n, plural(n), strings.Join(clean, ", "), more, to)
	}
}

type storeCopyJSON struct {
	Mode            string           `json:"mode"`
	From            string           `json:"from"`
	To              string           `json:"to"`
	Identity        string           `json:"identity"`
	RetiredOnly     bool             `json:"retired_only"`
	Rows            map[string]int64 `json:"rows"`
	DataStaysBehind []string         `json:"data_stays_behind"`
	Seconds         float64          `json:"seconds"`
}

func storeCopyToJSON(res *engine.CopyResult, from, to string) storeCopyJSON {
	j := storeCopyJSON{Mode: "move", From: from, To: to, Identity: res.Identity, RetiredOnly: res.Finished, Rows: map[string]int64{},
		DataStaysBehind: append([]string{}, res.DataStaysBehind...), Seconds: res.Elapsed.Seconds()}
	if res.Snapshot {
		j.Mode = "snapshot"
	}
	for _, k := range copyKinds {
		j.Rows[k.key] = res.Rows[k.key]
	}
	return j
}

// roundDuration is d to a tenth of a second, or to the millisecond under
// one second (a small store copies in milliseconds, not in "0s").
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
