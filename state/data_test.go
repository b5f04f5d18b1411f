package state

import (
	"strings"
	"testing"
)

// TestUpsertAction: the columns that are not keys are set from excluded,
// in the query's order, each name quoted as the backend quotes; with only
// keys the conflict is left alone.
func TestUpsertAction(t *testing.T) {
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	if got, want := UpsertAction([]string{"id", "v", `a"b`}, []string{"id"}, quote), `UPDATE SET "v" = excluded."v", "a""b" = excluded."a""b"`; got != want {
		t.Errorf("UpsertAction = %s, want %s", got, want)
	}
	if got := UpsertAction([]string{"id"}, []string{"id"}, quote); got != "NOTHING" {
		t.Errorf("all keys: UpsertAction = %s, want NOTHING", got)
	}
	if got := QuoteList([]string{"a", "b"}, quote); got != `"a", "b"` {
		t.Errorf("QuoteList = %s", got)
	}
}
