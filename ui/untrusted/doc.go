// Package untrusted makes strings that come from outside bollhav's own code
// safe to show on a terminal: a job's stderr kept as a unit's error, a
// warehouse's error, a blocked reason that quotes one, an audit actor or
// argument, a model's name as the store holds it.
//
// Such a string can carry escape sequences — a loader that echoes an
// upstream API's error body can clear the screen (ESC [ 2 J), conceal text
// (ESC [ 8 m), retitle the terminal (ESC ] 0 ; … BEL) or write the
// clipboard (ESC ] 52 ; …) of whoever reads it. Text and Line make every
// such byte visible instead of letting the terminal act on it, so an
// operator sees that the text held an escape, and which. JSON output keeps
// the exact bytes (encoding/json escapes control characters); only text
// meant for a terminal passes through here.
//
// It is data in, data out: no terminal, no I/O, nothing of the engine.
package untrusted
