package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// t0 is the suite's epoch: every window is written as hours after it, so the
// expected values read like the hand-worked examples they are.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is t0 plus h hours.
func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// clock is a wall-clock instant for "now" arguments, well after the windows,
// at whole seconds so every backend keeps it exactly.
func clock(min int) time.Time { return t0.AddDate(0, 1, 0).Add(time.Duration(min) * time.Minute) }

// win is the window [t0+from h, t0+to h).
func win(from, to int) state.Window { return state.MustWindow(at(from), at(to)) }

// winD is a window with duration bounds, for edges inside an hour.
func winD(from, to time.Duration) state.Window { return state.MustWindow(t0.Add(from), t0.Add(to)) }

// hourly returns the hourly windows [from h, from+1 h) … [to-1 h, to h).
func hourly(from, to int) []state.Window {
	out := make([]state.Window, 0, to-from)
	for h := from; h < to; h++ {
		out = append(out, win(h, h+1))
	}
	return out
}

// hw prints a window relative to t0 ("[1h,2h)", "[90m,3h)", "timeless"), the
// form every expectation in the suite is written in.
func hw(w state.Window) string {
	if w.IsZero() {
		return "timeless"
	}
	return "[" + offset(w.Since) + "," + offset(w.Until) + ")"
}

func offset(t time.Time) string {
	d := t.Sub(t0)
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dm", d/time.Minute)
}

func hws(ws []state.Window) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = hw(w)
	}
	return strings.Join(parts, " ")
}

// brief is a unit as "<model> [0h,1h) applied".
func brief(u state.Unit) string { return u.Model + " " + hw(u.Window) + " " + string(u.Status) }

func briefs(us []state.Unit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = brief(u)
	}
	return out
}

func claimBriefs(cs []state.Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = brief(c.Unit)
	}
	return out
}

// sweepModel is an hourly model of pipeline "p" starting at t0, fixed or
// flexible, as the sweep and region checks register them.
func sweepModel(name, flex string) state.ModelRecord {
	return state.ModelRecord{Name: name, Pipeline: "p", Temporality: "temporal", Flexibility: flex, Interval: "1h",
		Timezone: "UTC", Start: t0, Definition: []byte(`{}`), ContentHash: "x"}
}

// sweepTimeless is a timeless model of pipeline "p", as the sweep checks
// register it.
func sweepTimeless(name string) state.ModelRecord {
	return state.ModelRecord{Name: name, Pipeline: "p", Temporality: "timeless", Definition: []byte(`{}`), ContentHash: "x"}
}

// modelA registers the fixed hourly model "a" in the default environment
// and prefills its first hours hourly units at now.
func modelA(t testing.TB, s state.Store, hours int, now time.Time) {
	fixedHours(t, s, "a", 0, hours, now)
}

// modelM is modelA for the model "m" (the attempt, retry, fingerprint and
// data tests' own), its hours [from, to) prefilled at clock(0).
func modelM(t testing.TB, s state.Store, from, to int) { fixedHours(t, s, "m", from, to, clock(0)) }

// fixedHours registers the fixed hourly model name in the default
// environment and prefills its hours [from, to) at now.
func fixedHours(t testing.TB, s state.Store, name string, from, to int, now time.Time) {
	t.Helper()
	register(t, s, "", fixModel(name))
	prefill(t, s, "", name, hourly(from, to), now)
}

// discoverRun creates a discover run started at clock(0) and returns its id.
func discoverRun(t testing.TB, s state.Store) int64 {
	t.Helper()
	run, err := s.CreateRun(t.Context(), state.Run{StateMode: "discover", StartedAt: clock(0)})
	must(t, "CreateRun", err)
	return run
}

// storeAs is s as the optional reader T; a store without it fails t, named
// by method.
func storeAs[T any](t testing.TB, s state.Store, method string) T {
	t.Helper()
	r, ok := s.(T)
	if !ok {
		t.Fatalf("%s store has no %s", s.Backend(), method)
	}
	return r
}

// registerEnvs registers recs at at(0) in each of envs.
func registerEnvs(t testing.TB, s state.Store, recs []state.ModelRecord, envs ...string) {
	t.Helper()
	for _, env := range envs {
		if _, err := s.Register(t.Context(), env, recs, nil, at(0)); err != nil {
			t.Fatal(err)
		}
	}
}

// fixModel is an hourly fixed-grid model; flexModel is an hourly flexible one.
func fixModel(name string) state.ModelRecord  { return temporal(name, "fix") }
func flexModel(name string) state.ModelRecord { return temporal(name, "flex") }

func temporal(name, flex string) state.ModelRecord {
	def := fmt.Sprintf(`{"name": %q, "chunking": {"interval": "1h", "start": %q, "flexibility": %q}}`, name, state.FormatTime(t0), flex)
	return state.ModelRecord{
		Name: name, Pipeline: "core", Temporality: "temporal", Flexibility: flex,
		Interval: "1h", Timezone: "UTC", Start: t0,
		Definition: []byte(def), ContentHash: hash(def),
	}
}

func timelessModel(name string) state.ModelRecord {
	def := fmt.Sprintf(`{"name": %q, "temporality": "timeless"}`, name)
	return state.ModelRecord{
		Name: name, Pipeline: "core", Temporality: "timeless",
		Definition: []byte(def), ContentHash: hash(def),
	}
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// register registers models (no edges) in env at clock(0).
func register(t testing.TB, s state.Store, env string, models ...state.ModelRecord) map[string]int {
	t.Helper()
	ids, err := s.Register(t.Context(), env, models, nil, clock(0))
	if err != nil {
		t.Fatalf("Register(%q): %v", env, err)
	}
	return ids.TaskIDs
}

func prefill(t testing.TB, s state.Store, env, model string, ws []state.Window, now time.Time) int {
	t.Helper()
	n, err := s.Prefill(t.Context(), state.PrefillRequest{Env: env, Model: model, Windows: ws, Now: now})
	if err != nil {
		t.Fatalf("Prefill(%s, %d windows): %v", model, len(ws), err)
	}
	return n
}

// scan returns every unit of a model, or of every model of env when model is
// empty.
func scan(t testing.TB, s state.Store, env, model string) []state.Unit {
	t.Helper()
	return scanQ(t, s, state.UnitQuery{Env: env, Model: model})
}

func scanQ(t testing.TB, s state.Store, q state.UnitQuery) []state.Unit {
	t.Helper()
	var out []state.Unit
	if err := s.ScanUnits(t.Context(), q, func(u state.Unit) error { out = append(out, u); return nil }); err != nil {
		t.Fatalf("ScanUnits(%+v): %v", q, err)
	}
	return out
}

// unit returns the model's unit with exactly window w.
func unit(t testing.TB, s state.Store, env, model string, w state.Window) state.Unit {
	t.Helper()
	for _, u := range scan(t, s, env, model) {
		if u.Window.Equal(w) {
			return u
		}
	}
	t.Fatalf("%s has no unit %s; it has %v", model, hw(w), briefs(scan(t, s, env, model)))
	return state.Unit{}
}

// markApplied moves the pending units of model inside w to applied at
// appliedAt, the way an operator's mark does.
func markApplied(t testing.TB, s state.Store, env, model string, w state.Window, appliedAt time.Time) int {
	t.Helper()
	n, err := s.SetStatus(t.Context(), state.StatusChange{Env: env, Model: model, Window: w, From: []state.UnitStatus{state.Pending}, To: state.Applied, AppliedAt: appliedAt, Now: appliedAt})
	if err != nil {
		t.Fatalf("SetStatus(%s %s → applied): %v", model, hw(w), err)
	}
	return n
}

// claim claims up to limit units of model (every model when empty) as worker
// at now with a ten-minute lease.
func claim(t testing.TB, s state.Store, env, model string, limit int, now time.Time) []state.Claim {
	t.Helper()
	req := state.ClaimRequest{Env: env, Worker: "w1", Lease: 10 * time.Minute, Limit: limit, Now: now}
	if model != "" {
		req.Models = []string{model}
	}
	cs, err := s.Claim(t.Context(), req)
	if err != nil {
		t.Fatalf("Claim(%s): %v", model, err)
	}
	return cs
}

// claimExactly is claim that fails the test unless it hands out all n
// units it asks for: the start of every test that works on claimed units.
func claimExactly(t testing.TB, s state.Store, env, model string, n int, now time.Time) []state.Claim {
	t.Helper()
	cs := claim(t, s, env, model, n, now)
	if len(cs) != n {
		t.Fatalf("claimed %v", claimBriefs(cs))
	}
	return cs
}

func complete(t testing.TB, s state.Store, c state.Claim, st state.UnitStatus, now time.Time) {
	t.Helper()
	if err := s.Complete(t.Context(), c, state.Outcome{Status: st, At: now}); err != nil {
		t.Fatalf("Complete(%s → %s): %v", brief(c.Unit), st, err)
	}
}

func coverage(t testing.TB, s state.Store, env, model string, w state.Window) string {
	t.Helper()
	set, err := s.Coverage(t.Context(), env, model, w)
	if err != nil {
		t.Fatalf("Coverage(%s, %s): %v", model, hw(w), err)
	}
	return hws(set.Windows())
}

func changes(t testing.TB, s state.Store, after int64) []state.Change {
	t.Helper()
	cs, err := s.Changes(t.Context(), after, 0)
	if err != nil {
		t.Fatalf("Changes(%d): %v", after, err)
	}
	return cs
}

// lastSeq is the newest change's seq, 0 when there is none.
func lastSeq(t testing.TB, s state.Store) int64 {
	t.Helper()
	cs := changes(t, s, 0)
	if len(cs) == 0 {
		return 0
	}
	return cs[len(cs)-1].Seq
}

// changeBrief is a change as "model [0h,3h) ->pending x3 run=0".
func changeBrief(c state.Change) string {
	return fmt.Sprintf("%s%s %s %s->%s x%d run=%d", envPrefix(c.Env), c.Model, hw(c.Window), c.From, c.To, c.Count, c.RunID)
}

func envPrefix(env string) string {
	if env == "" {
		return ""
	}
	return env + ":"
}

func changeBriefs(cs []state.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = changeBrief(c)
	}
	return out
}

// sortedChangeBriefs is for one bulk operation, whose per-status rows may
// come in any order.
func sortedChangeBriefs(cs []state.Change) []string {
	out := changeBriefs(cs)
	sort.Strings(out)
	return out
}

func eq[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func eqTime(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
	if !got.IsZero() && got.Location() != time.UTC {
		t.Errorf("%s = %s is not in UTC", what, got)
	}
}

func eqTimePtr(t testing.TB, what string, got *time.Time, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", what, fmtPtr(got), fmtPtr(want))
	default:
		eqTime(t, what, *got, *want)
	}
}

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func ptr[T any](v T) *T { return &v }

func eqJSON(t testing.TB, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s is not JSON: %v (%q)", what, err, got)
		return
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func wantNotFound(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, state.ErrNotFound) {
		t.Errorf("%s: err = %v, want ErrNotFound", what, err)
	}
}

func wantLeaseLost(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, state.ErrLeaseLost) {
		t.Errorf("%s: err = %v, want ErrLeaseLost", what, err)
	}
}

func must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
