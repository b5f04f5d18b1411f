// Package source owns the data a model reads that no model produces: file
// sources (CSV, TSV and JSON lines; text encodings; date layouts; typed
// columns; archiving a file once it is loaded) and hardcoded rows turned
// into typed columns.
//
// It reads files and turns values into rows; it must not touch a store,
// decide when a source is loaded or judge a gate. The executors in
// engine/executor load what it reads.
package source
