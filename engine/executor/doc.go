// Package executor owns how a unit's work is done: the command executor
// (its process group, environment, output parsing and secret redaction) and
// the data executor for sql, query and view models (templates rendered,
// sources loaded, the write handed to the store's DataStore), behind one
// small interface, Executor, with a dispatcher that picks by run kind.
//
// An executor only does the work of the unit it is handed: it never reads
// or changes unit state, claims or runs — the engine's run loop owns every
// state transition. The one exception is explicit: an Applier records a
// unit applied in the same transaction as its data, under the claim the run
// loop passes in, so data and state commit together.
package executor
