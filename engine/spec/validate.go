package spec

import (
	"fmt"
	"strings"
)

// The definition-time rules that span fields, models or the whole spec
// (docs/design.md, Combinations that do not fit). Field-local checks — a value's
// syntax, an identifier, an enum — run while decoding; the rules here see a
// decoded source, model or spec. Rules that need the registry (EXACT on a
// flexible upstream, a gated upstream naming an unregistered model, a
// window-scoped level on a timeless upstream) are the gate's: the spec alone
// cannot know another deployment's models.

// checkSource applies the rules of one source on its own.
func (d *decoder) checkSource(s *sourceSite) {
	src := s.src
	if src.Gated() && src.Kind != KindModel {
		article := "a"
		if src.Kind == KindAPI {
			article = "an"
		}
		d.errAt(s.contractKey, "contract on %s %s source: only a model source can gate (files, APIs and hardcoded data are not state-tracked); drop the contract", article, src.Kind)
	}
	if s.freshnessKey.Line > 0 {
		switch {
		case s.contractKey.Line == 0:
			d.errAt(s.freshnessKey, "freshness requires a contract: an ungated source is never checked, so its age would never be")
		case src.Contract == Exists:
			d.errAt(s.freshnessKey, "freshness is not valid with EXISTS, which never inspects state: there is no applied_at to age; use WHOLE or a window level")
		}
	}
	if src.RequireCurrent {
		switch {
		case s.contractKey.Line == 0:
			d.errAt(s.requireCurrentKey, "require_current requires a contract: an ungated source is never checked, so its definition would never be")
		case src.Contract == Exists:
			d.errAt(s.requireCurrentKey, "require_current is not valid with EXISTS, which never inspects state: there are no applied windows to find outdated; use WHOLE or a window level")
		}
	}
}

// checkModel applies the rules that relate a model's fields to each other.
func (d *decoder) checkModel(site *modelSite) {
	m := site.m
	switch {
	case !site.temporalityOK:
	case m.Temporality == Timeless && m.Chunking != nil:
		d.errAt(site.chunking, "chunking on a timeless model: it has one existence row and no windows; drop chunking or make it temporal")
		m.Chunking = nil
	case m.Temporality == Temporal && m.Chunking == nil:
		d.errAt(m.Pos, "temporal model has no chunking: want chunking: {interval: 1d, start: 2026-01-01T00:00:00Z}, or temporality: timeless")
	}
	seen := map[string]*sourceSite{}
	for _, s := range site.sources {
		d.source = ""
		if s.nameOK {
			d.source = s.src.Name
		}
		if s.src.Gated() && !m.State {
			d.errAt(s.contractKey, "gated upstream on a model without state (state: false): the contract would never be enforced; set state: true or drop the contract")
		}
		if s.src.Contract.WindowScoped() && m.Temporality == Timeless && site.temporalityOK {
			d.errAt(s.contractVal, "a timeless model cannot gate with %s: it has no window to match; use WHOLE (loaded) or EXISTS (registered)", s.src.Contract)
		}
		if !s.nameOK {
			continue
		}
		if site.nameOK && strings.EqualFold(s.src.Name, m.Name) {
			d.errAt(s.name, "source names its own model: a model cannot read itself as an upstream")
		}
		key := strings.ToLower(s.src.Name)
		if first := seen[key]; first != nil {
			d.errAt(s.name, "duplicate source name %q (first at %d:%d)", s.src.Name, first.name.Line, first.name.Column)
		} else {
			seen[key] = s
		}
	}
	d.source = ""
	if IsDataRun(m) && site.nameOK {
		d.checkTemplates(m)
	}
	tasks := map[string]Position{}
	for i, e := range m.After {
		p := site.after[i]
		if site.nameOK && strings.EqualFold(e.Task, m.Name) {
			d.errAt(p, "after names the model itself: a task cannot wait on its own run")
			continue
		}
		key := strings.ToLower(e.Task)
		if first, dup := tasks[key]; dup {
			d.errAt(p, "after lists %s twice (first at %d:%d): one edge per task; use on: always to run after either outcome", e.Task, first.Line, first.Column)
			continue
		}
		tasks[key] = p
	}
}

// checkSpec applies the rules across models: unique names and after edges
// that name a model of the spec.
func (d *decoder) checkSpec(sites []*modelSite) {
	byName := map[string]*modelSite{}
	for _, s := range sites {
		if !s.nameOK {
			continue
		}
		key := strings.ToLower(s.m.Name)
		if first := byName[key]; first != nil {
			d.model = s.m.Name
			d.errAt(s.name, "duplicate model name %q (first at %d:%d%s)", s.m.Name, first.name.Line, first.name.Column, caseNote(first.m.Name, s.m.Name))
			continue
		}
		byName[key] = s
	}
	for _, s := range sites {
		if !s.nameOK {
			continue
		}
		d.model = s.m.Name
		for i, e := range s.m.After {
			if strings.EqualFold(e.Task, s.m.Name) {
				continue // reported by checkModel
			}
			if target := byName[strings.ToLower(e.Task)]; target == nil || target.m.Name != e.Task {
				d.errAt(s.after[i], "after names %s, which is not a model of this spec", e.Task)
			}
		}
	}
	d.model = ""
}

// caseNote explains a duplicate that differs only in case: table names are
// case-insensitive in SQLite and in unquoted SQL, so both would be one table.
func caseNote(a, b string) string {
	if a == b {
		return ""
	}
	return fmt.Sprintf(", as %s; names that differ only in case are one table in SQLite", a)
}

// checkTemplates renders a sql, query or view model's templates once, so a
// syntax error or a ref to an undeclared, api or unknown source is a spec
// error with a line, not a failure of every unit at run time.
func (d *decoder) checkTemplates(m *Model) {
	texts := append([]string{m.Run.Query}, m.Run.SQL...)
	plain := func(parts ...string) (string, error) { return strings.Join(parts, "."), nil }
	for _, text := range texts {
		if text == "" {
			continue
		}
		if _, err := RenderSQL(m, Env{}, text, plain); err != nil {
			d.errAt(m.Run.Pos, "%v", err)
			return
		}
	}
}
