//go:build race

package sqlite

// raceEnabled: under -race the transpiled SQLite runs many times slower.
const raceEnabled = true
