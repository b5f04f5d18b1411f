//go:build !race

package gate_test

// underRace is true in a race-detector build; see race_test.go.
const underRace = false
