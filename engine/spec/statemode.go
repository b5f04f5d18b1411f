package spec

import (
	"fmt"
	"strings"
)

// StateMode is how a run treats state that already exists in its window
// (docs/design.md, STATE_MODE). It is chosen per run, not
// per model, so one definition can be re-checked, re-run or rebuilt without
// editing the spec.
type StateMode string

// The three modes. Bulldozer is the default because it is the one that does
// what an operator running a window usually means: run exactly that window
// again, keeping its boundaries, without touching anything outside it.
const (
	// Discover keeps applied rows and only re-checks the rest: the safe
	// "catch up" mode, which never redoes finished work.
	Discover StateMode = "discover"
	// Bulldozer resets the window's rows to pending and runs exactly them.
	Bulldozer StateMode = "bulldozer"
	// Torch deletes the model's state and rebuilds it, at the (possibly new)
	// chunk; the only mode that may migrate a fixed model's grid.
	Torch StateMode = "torch"
)

// The environment variables a run honours; the CLI's --mode and
// --interval-override flags override them.
const (
	StateModeEnvVar        = "STATE_MODE"
	IntervalOverrideEnvVar = "INTERVAL_OVERRIDE"
)

// ParseStateMode reads a mode as written in a flag or STATE_MODE, in any case
// and with surrounding blanks ignored, since both come from humans and
// shells. An empty string is the default, Bulldozer, so an unset variable
// means "no preference".
func ParseStateMode(s string) (StateMode, error) {
	switch m := StateMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Bulldozer, nil
	case Discover, Bulldozer, Torch:
		return m, nil
	}
	return "", fmt.Errorf("unknown state mode %q: want discover, bulldozer (the default) or torch", s)
}

// String returns the mode in lower case, as JSON and BOLLHAV_STATE_MODE print
// it; the zero value prints as the default it stands for.
func (m StateMode) String() string {
	if m == "" {
		return string(Bulldozer)
	}
	return string(m)
}
