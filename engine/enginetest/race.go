//go:build race

package enginetest

// UnderRace is true in a race-detector build, where the pure-Go SQLite runs
// five to ten times slower: a test at scale checks the same answer on
// fewer units there, and keeps its full size in a plain `go test`, which
// is what the README's test command runs.
const UnderRace = true
