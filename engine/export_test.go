package engine

import "github.com/bollhav/bollhav/state"

// StoreOf is e's store, for the engine's external tests and benchmarks,
// which set up and inspect fixtures in it; front ends have no way to it.
func StoreOf(e *Engine) state.Store { return e.store }
