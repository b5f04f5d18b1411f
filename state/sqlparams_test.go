package state

import (
	"slices"
	"testing"
)

func TestBindNamesRewritesOnlyRealParameters(t *testing.T) {
	pos := func(name string) string {
		if name == "since" {
			return "$1"
		}
		return "$2"
	}
	cases := []struct {
		name, in, want string
		names          []string
	}{
		{"both", "SELECT * FROM t WHERE ts >= :since AND ts < :until", "SELECT * FROM t WHERE ts >= $1 AND ts < $2", []string{"since", "until"}},
		{"repeated", "SELECT :since, :since", "SELECT $1, $1", []string{"since", "since"}},
		{"cast is not a parameter", "SELECT x::date, :since::timestamptz", "SELECT x::date, $1::timestamptz", []string{"since"}},
		{"string literal", "SELECT ':since', 'it''s :until'", "SELECT ':since', 'it''s :until'", nil},
		{"quoted identifier", `SELECT ":since" FROM t`, `SELECT ":since" FROM t`, nil},
		{"line comment", "SELECT 1 -- :since\n, :until", "SELECT 1 -- :since\n, $2", []string{"until"}},
		{"block comment", "SELECT /* :since */ :until", "SELECT /* :since */ $2", []string{"until"}},
		{"dollar quoted", "SELECT $x$ :since $x$, $$ :until $$, :since", "SELECT $x$ :since $x$, $$ :until $$, $1", []string{"since"}},
		{"positional kept", "SELECT $1, :until", "SELECT $1, $2", []string{"until"}},
		{"other names kept", "SELECT :sincere, :untilx, :foo", "SELECT :sincere, :untilx, :foo", nil},
		{"inside a word", "SELECT a:since", "SELECT a:since", nil},
		{"unterminated string", "SELECT ':since", "SELECT ':since", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, names := BindNames(c.in, pos)
			if got != c.want || !slices.Equal(names, c.names) {
				t.Fatalf("BindNames(%q) = %q %v, want %q %v", c.in, got, names, c.want, c.names)
			}
		})
	}
}
