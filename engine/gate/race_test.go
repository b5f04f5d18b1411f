//go:build race

package gate_test

// underRace is true in a race-detector build, where the pure-Go SQLite
// runs several times slower: property tests draw fewer sequences.
const underRace = true
