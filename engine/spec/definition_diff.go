package spec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FieldChange is one difference between two definitions, in what their
// fingerprints cover: Field names it (run.command, run.query, write,
// chunking.interval, source ref.fx, …), Old and New are short renderings
// ("-" for absent), a SQL text cut to the stretch around its first
// difference.
type FieldChange struct {
	Field, Old, New string
}

// String is "field: old → new".
func (c FieldChange) String() string { return c.Field + ": " + c.Old + " → " + c.New }

// DiffDefinitions lists what changed from old to cur among the things a
// definition fingerprint covers (see Fingerprint), in a fixed order: what
// makes an outdated window's definition differ from its model's current
// one. Comments, spare whitespace in SQL and everything a fingerprint leaves
// out (timeouts, retries, contracts…) never show.
func DiffDefinitions(old, cur ModelDefinition) []FieldChange {
	a, b := fingerprintInputOf(old), fingerprintInputOf(cur)
	var out []FieldChange
	add := func(field, o, n string) {
		if o != n {
			out = append(out, FieldChange{Field: field, Old: orDash(o), New: orDash(n)})
		}
	}
	add("temporality", a.Temporality, b.Temporality)
	ca, cb := a.Chunking, b.Chunking
	if ca == nil {
		ca = &fpChunking{}
	}
	if cb == nil {
		cb = &fpChunking{}
	}
	add("chunking.interval", ca.Interval, cb.Interval)
	add("chunking.start", ca.Start, cb.Start)
	add("chunking.flexibility", ca.Flexibility, cb.Flexibility)
	add("chunking.timezone", ca.Timezone, cb.Timezone)
	add("run", a.Run.Kind, b.Run.Kind)
	add("run.command", strings.Join(a.Run.Command, " "), strings.Join(b.Run.Command, " "))
	for i := range max(len(a.Run.SQL), len(b.Run.SQL)) {
		var o, n string
		if i < len(a.Run.SQL) {
			o = a.Run.SQL[i]
		}
		if i < len(b.Run.SQL) {
			n = b.Run.SQL[i]
		}
		o, n = snippets(o, n)
		add(fmt.Sprintf("run.sql[%d]", i+1), o, n)
	}
	qa, qb := snippets(a.Run.Query, b.Run.Query)
	add("run.query", qa, qb)
	add("run.write", writeText(a.Run.Write), writeText(b.Run.Write))
	out = append(out, diffSources(a.Sources, b.Sources)...)
	return out
}

// Summary is a one-phrase account of changes for a sentence: the run kind's
// change when it changed ("command → query"), else the fields that did
// ("run.command, source ref.fx").
func Summary(changes []FieldChange) string {
	var fields []string
	for _, c := range changes {
		if c.Field == "run" {
			return "run " + c.Old + " → " + c.New
		}
		fields = append(fields, c.Field)
	}
	return strings.Join(fields, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeText(w *Write) string {
	if w == nil {
		return ""
	}
	s := w.Mode.String()
	if len(w.Keys) > 0 {
		s += " keys " + strings.Join(w.Keys, ",")
	}
	if w.Column != "" {
		s += " column " + w.Column
	}
	return s
}

// diffSources compares sources by name: added, removed, or changed in
// what the fingerprint reads of them.
func diffSources(a, b []fpSource) []FieldChange {
	byName := func(ss []fpSource) map[string]fpSource {
		m := make(map[string]fpSource, len(ss))
		for _, s := range ss {
			m[s.Name] = s
		}
		return m
	}
	am, bm := byName(a), byName(b)
	var out []FieldChange
	for _, s := range a { // a and b are sorted by name
		n, ok := bm[s.Name]
		switch {
		case !ok:
			out = append(out, FieldChange{Field: "source " + s.Name, Old: s.Type, New: "-"})
		case sourceText(s) != sourceText(n):
			o, nw := snippets(sourceText(s), sourceText(n))
			out = append(out, FieldChange{Field: "source " + s.Name, Old: o, New: nw})
		}
	}
	for _, s := range b {
		if _, ok := am[s.Name]; !ok {
			out = append(out, FieldChange{Field: "source " + s.Name, Old: "-", New: s.Type})
		}
	}
	return out
}

// sourceText is what a fingerprint reads of a source, as compact JSON: a
// hardcoded source by its content hash, a model source's read config.
func sourceText(s fpSource) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// snippetContext is how many bytes a snippet keeps before the first
// difference, and its longest length.
const (
	snippetContext = 16
	snippetMax     = 48
)

// snippets cuts two texts to the stretch around where they first differ,
// so a one-word change in a long query reads as that word: "…WHERE n > 1
// GROUP…" → "…WHERE n > 2 GROUP…". Equal or short texts come back whole.
func snippets(a, b string) (string, string) {
	if a == b || len(a) <= snippetMax && len(b) <= snippetMax {
		return a, b
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	start := max(0, p-snippetContext)
	for start > 0 && start < len(a) && !utf8Start(a[start]) {
		start-- // never cut a character in two
	}
	return cut(a, start), cut(b, start)
}

func cut(s string, start int) string {
	if start >= len(s) {
		return "…"
	}
	end := min(len(s), start+snippetMax)
	for end < len(s) && !utf8Start(s[end]) {
		end++
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
