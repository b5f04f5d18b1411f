package spec

import (
	"strings"
	"testing"
)

// TestSQLTemplateErrors: a ref to an undeclared name fails the unit with a
// message naming it, before anything runs.
func TestSQLTemplateErrors(t *testing.T) {
	m := &Model{Name: "a.b", Schema: "a", Table: "b", Run: Run{Kind: RunSQL}}
	quote := func(p ...string) (string, error) { return strings.Join(p, "."), nil }
	if _, err := RenderSQL(m, Env{}, `SELECT * FROM {{ ref "x.y" }}`, quote); err == nil || !strings.Contains(err.Error(), `"x.y"`) {
		t.Errorf("undeclared ref: err = %v, want it named", err)
	}
	if _, err := RenderSQL(m, Env{}, `SELECT {{ this `, quote); err == nil || !strings.Contains(err.Error(), "a.b") {
		t.Errorf("bad template: err = %v, want the model named", err)
	}
	got, err := RenderSQL(m, Env{Suffix: "pr1"}, `SELECT * FROM {{ this }}`, quote)
	if err != nil {
		t.Fatal(err)
	}
	if got != "SELECT * FROM a_pr1.b" {
		t.Errorf("this in a suffixed env = %v, want %v", got, "SELECT * FROM a_pr1.b")
	}
}

// TestSQLTemplateErrorIsASpecError: a bad template fails the spec load with
// the run block's line, before any store is touched.
func TestSQLTemplateErrorIsASpecError(t *testing.T) {
	_, err := Parse("bollhav.yaml", []byte(`models:
  - name: a.b
    temporality: timeless
    run:
      query: SELECT * FROM {{ ref "x.y" }}
`))
	if err == nil || !strings.Contains(err.Error(), "bollhav.yaml:4:") || !strings.Contains(err.Error(), `"x.y"`) {
		t.Fatalf("ParseSpec = %v, want an error at line 4 naming x.y", err)
	}
}
