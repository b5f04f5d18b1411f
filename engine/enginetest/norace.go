//go:build !race

package enginetest

// UnderRace is false in a plain build; see race.go.
const UnderRace = false
