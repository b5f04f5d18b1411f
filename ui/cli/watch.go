package cli

import (
	gocontext "context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

func init() {
	var fromStart bool
	var count int
	var poll time.Duration
	register(&command{
		name:    "watch",
		args:    "[MODEL…]",
		summary: "print unit state transitions as they happen (NDJSON with -o json)",
		globals: append(storeGlobals, gTheme),
		long: `watch follows the state store's change feed and prints one line per change in
the environment of --env, optionally only for the MODELs named: from now on,
or from the start of the feed with --from-start. A bulk transition (a prefill,
a mark, a reset) is one change: the hull of its windows and how many units
moved. It runs until SIGINT or SIGTERM (exit 0), or until --count changes have
been printed. PostgreSQL pushes changes (LISTEN/NOTIFY); SQLite is polled. A
lost connection is retried with backoff and costs no change: the feed resumes
where it stopped.

With -o json, one object per line (NDJSON):
  {"model","since","until","from","to","at","run_id","count"}
Timestamps are RFC 3339 UTC; since and until are null for a timeless model's
existence row; from is null for units created (prefill), to is null for units
deleted (torch); run_id is null for a change made outside a run (a mark);
count is how many units made this transition.`,
		examples: []string{
			"bollhav watch",
			"bollhav watch raw.orders warehouse.daily_orders",
			"bollhav watch -o json | jq -c 'select(.to==\"failed\")'",
			"bollhav watch --from-start --count 100 -o json > changes.ndjson",
		},
		flags: func(fs *pflag.FlagSet) {
			fromStart, count, poll = false, 0, 0
			fs.BoolVar(&fromStart, "from-start", false, "replay the feed from its first change instead of starting now")
			fs.IntVar(&count, "count", 0, "stop after printing this many changes (0: run until stopped)")
			fs.DurationVar(&poll, "poll", time.Second, "the longest a change waits unseen when no wake-up arrives")
		},
		run: func(c *cmdContext, args []string) int { return runWatch(c, args, fromStart, count, poll) },
		// A signal is how a watch is stopped: it exits 0.
		ownsSignals: true,
	})
}

type watchJSON struct {
	unitRefJSON
	From  *string `json:"from"`
	To    *string `json:"to"`
	At    string  `json:"at"`
	RunID *int64  `json:"run_id"`
	Count int     `json:"count"`
}

func runWatch(c *cmdContext, args []string, fromStart bool, count int, poll time.Duration) int {
	if count < 0 {
		return c.fail("watch", &usageError{"--count must be 0 (no limit) or more"})
	}
	if poll < 10*time.Millisecond {
		return c.fail("watch", &usageError{"--poll must be at least 10ms"})
	}
	ctx := c.ctx
	e, closeStore, code := c.openEngine(ctx, "watch")
	if e == nil {
		return code
	}
	defer closeStore()
	only := map[string]bool{}
	for _, m := range args {
		if _, err := e.ModelStatus(ctx, m); err != nil {
			fmt.Fprintf(c.Err, "bollhav watch: %v\n", err)
			return ExitUsage
		}
		only[m] = true
	}
	var after int64
	if !fromStart {
		var err error
		if after, err = e.LatestChangeSeq(ctx); err != nil {
			if ctx.Err() != nil {
				return ExitOK
			}
			fmt.Fprintf(c.Err, "bollhav watch: reading the change feed: %v\n", err)
			return ExitUsage
		}
	}
	fmt.Fprintf(c.Err, "bollhav watch: following changes in %s after #%d; Ctrl-C stops\n", e.Env(), after)

	followCtx, cancel := gocontext.WithCancel(ctx)
	defer cancel()
	changes := e.Follow(followCtx, after, poll, func(err error) {
		if err == nil {
			fmt.Fprintln(c.Err, "bollhav watch: reading the change feed again")
			return
		}
		if followCtx.Err() == nil {
			fmt.Fprintf(c.Err, "bollhav watch: reading the change feed: %v (retrying)\n", err)
		}
	})
	// The follower's goroutine writes to stderr: wait for it to end.
	defer func() {
		cancel()
		for range changes {
		}
	}()

	out := colorWriter(c.Out)
	pal := c.palette()
	printed := 0
	for ch := range changes {
		if ch.Env != e.Env().Suffix || (len(only) > 0 && !only[ch.Model]) {
			continue
		}
		var err error
		if c.Output == "json" {
			b, _ := json.Marshal(changeToJSON(ch))
			_, err = c.Out.Write(append(b, '\n'))
		} else {
			_, err = fmt.Fprintln(out, changeText(ch, pal))
		}
		if err != nil { // stdout closed (| head): stop quietly
			return ExitOK
		}
		printed++
		if count > 0 && printed >= count {
			return ExitOK
		}
	}
	return ExitOK
}

func changeToJSON(ch state.Change) watchJSON {
	j := watchJSON{unitRefJSON: unitRef(ch.Model, ch.Window), At: state.FormatTime(ch.At), Count: ch.Count}
	if ch.From != "" {
		s := string(ch.From)
		j.From = &s
	}
	if ch.To != "" {
		s := string(ch.To)
		j.To = &s
	}
	if ch.RunID != 0 {
		id := ch.RunID
		j.RunID = &id
	}
	return j
}

// changeText reads "AT  MODEL  WINDOW  FROM → TO  N units[  run R]".
func changeText(ch state.Change, pal palette) string {
	window := "existence row"
	if !ch.Window.IsZero() {
		window = ch.Window.String()
	}
	from, to := "new", "deleted"
	if ch.From != "" {
		from = pal.status(string(ch.From))
	}
	if ch.To != "" {
		to = pal.status(string(ch.To))
	}
	s := fmt.Sprintf("%s  %s  %s  %s → %s  %d unit%s", state.FormatTime(ch.At), untrusted.Line(ch.Model), window, from, to, ch.Count, plural(ch.Count))
	if ch.RunID != 0 {
		s += "  run " + strconv.FormatInt(ch.RunID, 10)
	}
	return s
}
