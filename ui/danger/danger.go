// Package danger says how much harm each operator action can do, and so how
// it is confirmed, in one place the terminal UI's dialogs and the command
// line both read: a destructive action is never confirmed with a keystroke
// in one and a typed word in the other.
//
// It must stay data: no I/O, no terminal, nothing of the engine beyond the
// STATE_MODE names.
package danger

import "github.com/bollhav/bollhav/engine/spec"

// Level is how much harm an action can do.
type Level int

const (
	// Changes is an action that changes state a later run can redo: a
	// discover or bulldozer run, a mark. The UI confirms it with a button
	// (the focus starting on Cancel); the command line goes ahead.
	Changes Level = iota + 1
	// Destroys is an action that deletes state: a torch run deletes every
	// unit of its models before rebuilding them. It is confirmed by typing —
	// the model's name in the UI, "yes" at the command line (or --yes
	// without a terminal) — never by a single key.
	Destroys
)

// Typed reports whether confirming an action of this level takes typing
// rather than choosing a button.
func (l Level) Typed() bool { return l >= Destroys }

// Run is the danger of a run in mode.
func Run(mode spec.StateMode) Level {
	if mode == spec.Torch {
		return Destroys
	}
	return Changes
}

// Mark is the danger of a mark: an operator repair that moves units'
// statuses (running units are left alone), recorded in the audit log.
const Mark = Changes
