package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// auditView is the store's audit log, newest first: who did what, with
// which arguments, and how it ended — refusals (a read-only viewer trying
// an action) included. The log has no change feed of its own (a refusal
// moves no unit), so the view reloads on every feed message while it is on
// top, and on a timer (auditPoll) for what comes without one.
type auditView struct {
	viewBase
	entries []state.AuditEntry
	idx     []int
	cur     cursor
	listQuery
	// ticking is true while a reload tick is set; tickSeq tells the
	// current one from older ones.
	ticking bool
	tickSeq uint64
}

// auditLimit is how many entries the audit view reads.
const auditLimit = 500

// auditData is the audit view's data.
type auditData struct {
	entries []state.AuditEntry
}

// auditTickMsg is the audit view's reload timer.
type auditTickMsg struct {
	view int
	seq  uint64
}

func (m auditTickMsg) viewID() int { return m.view }

// loadAudit reads the newest entries of the store's audit log.
func loadAudit(e *engine.Engine) func(ctx context.Context) (auditData, error) {
	return func(ctx context.Context) (auditData, error) {
		entries, err := e.AuditLog(ctx, auditLimit)
		if err != nil {
			return auditData{}, fmt.Errorf("reading the audit log: %w", err)
		}
		return auditData{entries: entries}, nil
	}
}

func newAudit(c *common) *auditView { return &auditView{viewBase: newBase(c)} }

// viewAudit is the audit log, key 4.
const viewAudit viewKind = "audit"

func (v *auditView) kind() viewKind { return viewAudit }
func (v *auditView) title() string  { return "Audit" }

func (v *auditView) load(gen uint64, _ []string) tea.Cmd {
	return loadCmd(v.c, v.id, gen, loadAudit(v.c.eng))
}

// update takes the entries, and the reload timer's tick.
func (v *auditView) update(msg viewMsg) tea.Cmd {
	switch msg := msg.(type) {
	case loaded[auditData]:
		v.apply(msg.data)
	case auditTickMsg:
		v.tick(msg)
	}
	return nil
}

// apply takes the entries, keeping the cursor on its entry.
func (v *auditView) apply(d auditData) {
	var sel int64
	if e := v.selected(); e != nil {
		sel = e.ID
	}
	v.entries = d.entries
	v.refilter()
	v.cur.moveToFirst(len(v.idx), func(i int) bool { return v.entries[v.idx[i]].ID == sel })
}

// affected: the log is the store's, every environment's, and its entries
// are not changes; a change is a sign something was done, so any change
// reloads it (the timer catches the rest).
func (v *auditView) affected(changes []state.Change) (bool, []string) {
	return len(changes) > 0, nil
}

// auditPoll is how often the audit view reloads while on top: five times
// the feed's poll (5 s by default).
func (v *auditView) auditPoll() time.Duration { return 5 * v.c.feedPoll }

// settle sets the reload timer once the view is loaded and on top.
func (v *auditView) settle() tea.Cmd {
	if v.ticking || !v.loaded || !v.c.onTop(v.id) {
		return nil
	}
	v.ticking = true
	v.tickSeq++
	msg := auditTickMsg{view: v.id, seq: v.tickSeq}
	return tick(v.c.ctx, v.auditPoll(), func(time.Time) tea.Msg { return msg })
}

// tick reloads the view when it is still on top; the load's answer sets the
// next tick (settle).
func (v *auditView) tick(msg auditTickMsg) {
	if msg.seq != v.tickSeq {
		return
	}
	v.ticking = false
	if !v.c.onTop(v.id) {
		return // shown again, it reloads and ticks again
	}
	if v.loading {
		v.ask(nil)
		return
	}
	v.c.send(reloadMsg{v.id})
}

func (v *auditView) setFilter(s string) tea.Cmd {
	v.query = s
	v.refilter()
	return nil
}

// refilter keeps the entries whose actor, action, arguments or outcome
// contain the query.
func (v *auditView) refilter() {
	v.idx = matching(v.idx, len(v.entries), v.query, func(i int, q string) bool {
		e := v.entries[i]
		return strings.Contains(strings.ToLower(e.Actor+"\x00"+e.Action+"\x00"+v.c.auditArgs(e.Args)+"\x00"+e.Outcome), q)
	})
	v.cur.setLen(len(v.idx))
}

func (v *auditView) selected() *state.AuditEntry {
	if v.cur.pos < len(v.idx) {
		return &v.entries[v.idx[v.cur.pos]]
	}
	return nil
}

func (v *auditView) key(msg tea.KeyPressMsg) tea.Cmd {
	v.cur.handleKey(v.c.keys, msg)
	return nil
}

func (v *auditView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *auditView) bindings() []key.Binding { return nil }

// actorShort is an actor as a list has room for it: an SSH session
// ("ssh:SHA256:zKxrQ… oncall", ui/serve's Actor) as its user and the start
// of its key's fingerprint, "oncall (zKxr…)", so a column of 14 cells at
// 80 columns names the person and not only "ssh:SHA256:zK…"; any other
// actor as it is. The record keeps the whole form, which the selected
// entry's detail shows: the fingerprint is the verified part.
func actorShort(actor string) string {
	rest, ok := strings.CutPrefix(actor, "ssh:")
	if !ok {
		return actor
	}
	var fp, user string
	for _, f := range strings.SplitN(rest, " ", 2) {
		if after, isKey := strings.CutPrefix(f, "SHA256:"); isKey && fp == "" {
			fp = after
		} else {
			user = f
		}
	}
	if fp == "" {
		return actor
	}
	if user == "" {
		user = "ssh"
	}
	return user + " (" + string([]rune(fp)[:min(4, len([]rune(fp)))]) + "…)"
}

// auditOutcome is how an outcome reads at a glance: ok, an error, or a
// refusal, each with its glyph, so it does not depend on colour.
func auditOutcome(t themes.Theme, outcome string) (glyph, text string) {
	outcome = untrusted.Line(outcome) // an error's words, cleaned before they are styled
	switch {
	case strings.HasPrefix(outcome, "refused"):
		return t.Error.Render(themes.Glyph(themes.Blocked)), t.Error.Render(outcome)
	case strings.HasPrefix(outcome, "error"):
		return t.Error.Render(themes.Glyph(themes.Failed)), t.Error.Render(outcome)
	case strings.HasPrefix(outcome, "ok"):
		return t.Glyph(themes.Applied), outcome
	}
	return t.Muted.Render("·"), outcome
}

// auditArgs prints an entry's arguments as k=v, sorted by key: env "" is
// prod, a window is printed as the UI prints windows ("2026-01-01
// 05:00–06:00", in the header's zone), and any other value with a space
// or nothing in it is quoted.
func (c *common) auditArgs(args map[string]string) string {
	keys := slices.Sorted(maps.Keys(args))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		val := args[k]
		w, isWindow := parseWindowArg(val)
		switch {
		case k == "env":
			val = spec.Env{Suffix: val}.String()
		case isWindow:
			val = c.window(w)
		case val == "" || strings.ContainsAny(val, " \t\""):
			val = strconv.Quote(val)
		}
		parts = append(parts, k+"="+val)
	}
	return untrusted.Line(strings.Join(parts, " ")) // stored arguments, cleaned before they are styled
}

// parseWindowArg reads a window as state.Window.String prints it:
// "[2026-01-01T05:00:00Z, 2026-01-01T06:00:00Z)".
func parseWindowArg(s string) (state.Window, bool) {
	inner, ok := strings.CutPrefix(s, "[")
	if !ok {
		return state.Window{}, false
	}
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok {
		return state.Window{}, false
	}
	a, b, ok := strings.Cut(inner, ", ")
	if !ok {
		return state.Window{}, false
	}
	since, err1 := time.Parse(time.RFC3339, a)
	until, err2 := time.Parse(time.RFC3339, b)
	if err1 != nil || err2 != nil {
		return state.Window{}, false
	}
	return state.Window{Since: since.UTC(), Until: until.UTC()}, true
}

// auditDetail is the lines under the list: the selected entry whole, for
// what the columns cut.
const auditDetail = 4

func (v *auditView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	wide := w >= 120
	// One WHEN column, as the time toggle says (t): an age, or the time;
	// the selected entry's exact time is in the detail below.
	cols := []column{{w: 1}, {w: v.c.instantWidth()}}
	head := []string{"", "WHEN"}
	actorW, outcomeW := 14, 20
	if wide {
		actorW, outcomeW = min(40, max(14, w/5)), min(36, max(20, w/6))
	}
	cols = append(cols, column{w: actorW}, column{w: 9}, column{w: outcomeW}, column{w: 0})
	head = append(head, "ACTOR", "ACTION", "OUTCOME", "ARGUMENTS")
	lines := []string{t.Muted.Render(" " + row(w-1, cols, head...))}
	// The list, then a rule, the selected entry and the count.
	listH := max(1, h-2-auditDetail-1)
	v.cur.setHeight(listH)
	if len(v.idx) == 0 {
		lines = append(lines, t.Muted.Render("   "+emptyList("the audit log is empty", "audit entry", v.query)))
	}
	from, to := v.cur.visible()
	for i := from; i < to; i++ {
		e := v.entries[v.idx[i]]
		glyph, outcome := auditOutcome(t, e.Outcome)
		cells := []string{glyph, t.Muted.Render(v.c.whenAt(e.At))}
		cells = append(cells, untrusted.Line(actorShort(e.Actor)), t.Accent.Render(untrusted.Line(e.Action)), outcome, t.Muted.Render(v.c.auditArgs(e.Args)))
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	lines = pad(lines, w, h-1-auditDetail)
	lines = append(lines, v.detail(w)...)
	foot := " " + plural(len(v.entries), "entry", "entries")
	if len(v.entries) == auditLimit {
		foot += fmt.Sprintf(" (the newest %d)", auditLimit)
	}
	if v.query != "" {
		foot += fmt.Sprintf(" · %d match %q", len(v.idx), v.query)
	}
	if hint := v.cur.scrollHint(); hint != "" {
		foot += " · " + hint
	}
	return append(lines, t.Muted.Render(foot))
}

// detail is the selected entry whole: its time to the second (in the
// header's zone, as every time on screen), its action and who; its actor as
// the record has it; its outcome; its arguments.
func (v *auditView) detail(w int) []string {
	t := v.c.theme
	e := v.selected()
	if e == nil {
		return pad(nil, w, auditDetail)
	}
	glyph, outcome := auditOutcome(t, e.Outcome)
	sep := t.Muted.Render(" · ")
	return pad([]string{
		" " + t.Border.Render("─ ") + t.Base.Render(zoned(e.At, v.c.instantLoc(), "2006-01-02 15:04:05")) + sep + t.Accent.Render(untrusted.Line(e.Action)) +
			sep + t.Base.Render(untrusted.Line(actorShort(e.Actor))),
		// The actor as the record has it, on a line of its own: an SSH
		// key's whole fingerprint does not fit beside the rest at 80.
		"   " + t.Muted.Render("by ") + t.Base.Render(untrusted.Line(e.Actor)),
		"   " + glyph + " " + outcome,
		"     " + t.Muted.Render(v.c.auditArgs(e.Args)),
	}, w, auditDetail)
}
