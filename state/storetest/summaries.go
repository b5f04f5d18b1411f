package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// summaryOfUnits is a model's summary computed from scratch from its units:
// counts by status, newest applied_at, the merged applied windows.
func summaryOfUnits(model string, units []state.Unit) state.ModelSummary {
	sum := state.ModelSummary{Model: model, UnitStats: state.UnitStats{Counts: map[state.UnitStatus]int{}}}
	for _, st := range state.Statuses {
		sum.Counts[st] = 0
	}
	var applied []state.Window
	for _, u := range units {
		sum.Counts[u.Status]++
		if u.Status != state.Applied {
			continue
		}
		if !u.Window.IsZero() {
			applied = append(applied, u.Window)
		}
		if u.AppliedAt != nil && (sum.LastAppliedAt == nil || u.AppliedAt.After(*sum.LastAppliedAt)) {
			at := *u.AppliedAt
			sum.LastAppliedAt = &at
		}
	}
	sum.Coverage = state.NewIntervalSet(applied...)
	return sum
}

// summaryText prints a summary for comparison: statuses in order, times in
// UTC to the microsecond, coverage as its islands.
func summaryText(s state.ModelSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", s.Model)
	for _, st := range state.Statuses {
		fmt.Fprintf(&b, " %s=%d", st, s.Counts[st])
	}
	if len(s.Counts) != len(state.Statuses) {
		fmt.Fprintf(&b, " (counts hold %d statuses)", len(s.Counts))
	}
	last := "none"
	if s.LastAppliedAt != nil {
		last = s.LastAppliedAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	}
	fmt.Fprintf(&b, " newest=%s coverage=%v", last, s.Coverage.Windows())
	return b.String()
}

// summariesWant computes env's summaries of models from a scan of each.
func summariesWant(t testing.TB, s state.Store, env string, models []string) []string {
	t.Helper()
	var want []string
	for _, m := range slices.Sorted(slices.Values(models)) {
		want = append(want, summaryText(summaryOfUnits(m, scan(t, s, env, m))))
	}
	return want
}

func summaryTexts(sums []state.ModelSummary) []string {
	out := make([]string, len(sums))
	for i, s := range sums {
		out[i] = summaryText(s)
	}
	return out
}

// summariesMatchScan fails t unless Summaries of env — every model, and
// each one alone — equals a from-scratch computation over a scan of its
// units (grouped count, newest applied_at, merged coverage): the kept
// summary never drifts from the units. models must be every registered
// model of env.
func summariesMatchScan(t *testing.T, s state.Store, step, env string, models ...string) {
	t.Helper()
	want := summariesWant(t, s, env, models)
	got, err := s.Summaries(t.Context(), env, "")
	must(t, "Summaries", err)
	if g := summaryTexts(got); !slices.Equal(g, want) {
		t.Errorf("after %s: Summaries(%q):\n got  %q\n want %q (from a scan)", step, env, g, want)
	}
	countsMatch(t, s, step, env, got)
	for i, m := range slices.Sorted(slices.Values(models)) {
		one, err := s.Summaries(t.Context(), env, m)
		must(t, "Summaries of one model", err)
		if g := summaryTexts(one); !slices.Equal(g, want[i:i+1]) {
			t.Errorf("after %s: Summaries(%q, %s):\n got  %q\n want %q (from a scan)", step, env, m, g, want[i:i+1])
		}
	}
}

// countsMatch fails t unless StatusCounts of env equals the counts of sums
// (Summaries of every model of env, already checked against a scan):
// the models with units, in name order, each with its statuses that have
// units.
func countsMatch(t testing.TB, s state.Store, step, env string, sums []state.ModelSummary) {
	t.Helper()
	if err := countsAgree(t.Context(), s, env, sums); err != "" {
		t.Errorf("after %s: %s", step, err)
	}
}

// countsAgree compares StatusCounts with sums and says how they differ
// ("" when they agree).
func countsAgree(ctx context.Context, s state.Store, env string, sums []state.ModelSummary) string {
	var want []string
	for _, sum := range sums {
		if line := countsText(sum.Model, sum.Counts); line != "" {
			want = append(want, line)
		}
	}
	got, err := s.StatusCounts(ctx, env)
	if err != nil {
		return fmt.Sprintf("StatusCounts(%q): %v", env, err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.Model+":"+countsText("", c.Counts)+fmt.Sprintf(" (%d statuses)", len(c.Counts)))
	}
	for i := range want {
		want[i] += fmt.Sprintf(" (%d statuses)", strings.Count(want[i], "="))
	}
	if !slices.Equal(lines, want) {
		return fmt.Sprintf("StatusCounts(%q):\n got  %q\n want %q (the summaries' counts)", env, lines, want)
	}
	return ""
}

// countsText is a model's non-zero counts in status order ("" when it
// has no units), prefixed with its name when one is given.
func countsText(model string, counts map[state.UnitStatus]int) string {
	var b strings.Builder
	for _, st := range state.Statuses {
		if n := counts[st]; n != 0 {
			fmt.Fprintf(&b, " %s=%d", st, n)
		}
	}
	if b.Len() == 0 || model == "" {
		return b.String()
	}
	return model + ":" + b.String()
}
