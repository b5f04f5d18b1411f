package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// Stale windows in the model view: which freshness limit applies to a
// model (the tightest of the gated downstream edges that read it), the
// applied windows of a span too old for it, and the header line that sets
// the model's newest applied_at against it.

// freshLimit is the freshness limit a model's windows are held to: the
// tightest `within` among the gated edges of its downstreams that read
// it, and which edge that is. The zero freshLimit is no limit.
type freshLimit struct {
	Within time.Duration
	// Downstream is the model whose edge sets the limit.
	Downstream string
}

// tightestFreshness is model name's freshness limit among defs: the
// smallest `within` of a gated edge from it that has one; ties go to the
// downstream first by name, so the header does not flicker between them.
func tightestFreshness(defs map[string]*spec.Model, name string) freshLimit {
	var out freshLimit
	for _, m := range defs {
		for _, src := range m.Upstream {
			if !src.Gated() || src.Name != name || src.Freshness == nil || src.Freshness.Within <= 0 {
				continue
			}
			w := src.Freshness.Within
			if out.Within == 0 || w < out.Within || w == out.Within && m.Name < out.Downstream {
				out = freshLimit{Within: w, Downstream: m.Name}
			}
		}
	}
	return out
}

// staleScanLimit bounds the applied units a load reads for their
// applied_at (the coverage index has no times): past it the span's
// staleness is known only up to the last row read, and the timeline says
// it is partial.
const staleScanLimit = 10000

// loadStale adds to sp the applied windows of model name inside sp.Loaded
// whose applied_at is before cutoff: the span's stale windows. Nothing is
// read for a model that is not registered or is timeless.
func loadStale(ctx context.Context, e *engine.Engine, name string, st *engine.ModelStatus, sp *timelineSpan, cutoff time.Time) error {
	if st == nil || !st.Registered || st.Timeless() || sp.Loaded.Empty() {
		return nil
	}
	// A model whose newest row is fresh may still hold old ones; one whose
	// newest is older than cutoff has every applied window stale, but the
	// windows still come from the rows.
	return scanApplied(ctx, e, name, sp, func(u state.Unit) {
		if u.AppliedAt != nil && u.AppliedAt.Before(cutoff) {
			sp.Stale = append(sp.Stale, u.Window)
		}
	})
}

// scanApplied calls each for the applied units of model name inside
// sp.Loaded, reading at most staleScanLimit of them and setting
// sp.StalePartial when it stops there: the one bounded read behind both
// the stale and the outdated cells.
func scanApplied(ctx context.Context, e *engine.Engine, name string, sp *timelineSpan, each func(state.Unit)) error {
	n := 0
	err := e.ScanStoredUnits(ctx, name, sp.Loaded, []state.UnitStatus{state.Applied}, func(u state.Unit) error {
		if n == staleScanLimit {
			sp.StalePartial = true
			return errStopScan
		}
		n++
		each(u)
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return fmt.Errorf("reading the applied units of %s: %w", name, err)
	}
	return nil
}

// freshnessText is the model view's line on its newest applied_at: how
// long ago, and against the freshness limit of its downstreams when one
// has one, e.g. "newest applied 26h ago (2026-12-01 22:00Z) ~ STALE · limit
// 24h (raw.payments→core.daily_revenue)". STALE means the newest row is
// older than the limit, so every window is stale for that downstream; it
// comes before the limit so that an 80-column terminal still shows it.
func freshnessText(t themes.Theme, name string, st engine.ModelStatus, lim freshLimit, now time.Time, when func(*time.Time) string) string {
	s := t.Muted.Render("nothing applied yet")
	if st.LastAppliedAt != nil {
		s = t.Muted.Render("newest applied " + when(st.LastAppliedAt))
	}
	if lim.Within <= 0 {
		return s
	}
	if st.LastAppliedAt != nil && now.Sub(*st.LastAppliedAt) > lim.Within {
		s += " " + t.Status(themes.Stale).Render(themes.Glyph(themes.Stale)+" STALE")
	}
	return s + t.Muted.Render(" · limit "+gate.FormatWithin(lim.Within)+" ("+name+"→"+lim.Downstream+")")
}
