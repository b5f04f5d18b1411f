package state

import "testing"

func TestCanonicalSQL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT  1", "SELECT 1"},
		{"  SELECT\n\t1 \n", "SELECT 1"},
		{"SELECT 1 -- a comment\nFROM t", "SELECT 1 FROM t"},
		{"SELECT 1 -- trailing comment", "SELECT 1"},
		{"SELECT /* x */ 1", "SELECT 1"},
		{"a/**/b", "a b"},
		{"SELECT 'a  -- not  a comment'", "SELECT 'a  -- not  a comment'"},
		{`SELECT "My  Col" FROM t`, `SELECT "My  Col" FROM t`},
		{"SELECT 'it''s  x'", "SELECT 'it''s  x'"},
		{"SELECT $$ a  /* b */ $$", "SELECT $$ a  /* b */ $$"},
		{"SELECT x::int,  $1", "SELECT x::int, $1"},
		{"", ""},
		{"-- only a comment", ""},
	}
	for _, c := range cases {
		if got := CanonicalSQL(c.in); got != c.want {
			t.Errorf("CanonicalSQL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
