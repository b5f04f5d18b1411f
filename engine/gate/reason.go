package gate

import (
	"strings"

	"github.com/bollhav/bollhav/state"
)

// ReasonPart is one upstream's entry of a stored blocked_reason, read back
// into its parts: the upstream it names and what holds the unit back
// there. A blocked unit's reason is all the store keeps of its last gate
// evaluation; reading it back lets a view group blocked units by the
// upstream window they wait for — which is what repeats across a queue —
// without judging every gate again.
type ReasonPart struct {
	Upstream string
	// Level is the contract level as written ("THROUGH"), without ", stale".
	Level string
	// Missing are the ranges the upstream lacks ("missing [a, b), [c, d)").
	Missing []state.Window
	// Stale is a freshness failure: nothing missing, rows too old.
	Stale bool
	// Detail is the text after "UPSTREAM (LEVEL): ": "missing …", "not
	// applied", "newest applied_at … is older than 2h".
	Detail string
}

// ReasonParts splits a blocked_reason as Judge joins it ("; " between
// upstreams, each "UPSTREAM (LEVEL[, stale]): detail") into its parts. An
// entry that does not read that way (a reason written by another release)
// is kept whole as Detail with no Upstream.
func ReasonParts(reason string) []ReasonPart {
	var out []ReasonPart
	for entry := range strings.SplitSeq(reason, "; ") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		out = append(out, reasonPart(entry))
	}
	return out
}

func reasonPart(entry string) ReasonPart {
	open := strings.Index(entry, " (")
	closeAt := strings.Index(entry, "): ")
	if open <= 0 || closeAt < open {
		return ReasonPart{Detail: entry}
	}
	p := ReasonPart{Upstream: entry[:open], Level: entry[open+2 : closeAt], Detail: entry[closeAt+3:]}
	if lvl, ok := strings.CutSuffix(p.Level, ", stale"); ok {
		p.Level, p.Stale = lvl, true
	}
	if rest, ok := strings.CutPrefix(p.Detail, "missing "); ok {
		p.Missing = parseWindows(rest)
	}
	return p
}

// parseWindows reads joinWindows' "[a, b), [c, d)"; nil when it does not
// read that way.
func parseWindows(s string) []state.Window {
	var out []state.Window
	for s != "" {
		if !strings.HasPrefix(s, "[") {
			return nil
		}
		end := strings.Index(s, ")")
		if end < 0 {
			return nil
		}
		since, until, ok := strings.Cut(s[1:end], ", ")
		if !ok {
			return nil
		}
		a, err1 := state.ParseTime(since)
		b, err2 := state.ParseTime(until)
		if err1 != nil || err2 != nil || !b.After(a) {
			return nil
		}
		out = append(out, state.Window{Since: a, Until: b})
		s = strings.TrimPrefix(s[end+1:], ", ")
	}
	return out
}
