package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testRef is a document naming a test by its file: `dir/x_test.go`
// followed by the backticked names of the tests it means.
var testRef = regexp.MustCompile("`([\\w./-]+_test\\.go)`((?:,? ?(?:and )?`(?:Test|Benchmark|Fuzz)\\w*`)+)")

// testName is one backticked test name of a testRef.
var testName = regexp.MustCompile("`((?:Test|Benchmark|Fuzz)\\w*)`")

// TestDocsNameTestsWhereTheyAre fails when README.md or a page of docs/
// names a test by a file that does not define it: docs/RELIABILITY.md
// lists the test behind each guarantee, and tests move (this round moved
// forty of them beside their code), so a reader following a row must find
// the test where the row says.
func TestDocsNameTestsWhereTheyAre(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	for _, doc := range append(docs, "README.md") {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testRef.FindAllStringSubmatch(string(b), -1) {
			src, err := os.ReadFile(filepath.FromSlash(m[1]))
			if err != nil {
				t.Errorf("%s names %s, which the repository does not have", doc, m[1])
				continue
			}
			for _, n := range testName.FindAllStringSubmatch(m[2], -1) {
				refs++
				if !strings.Contains(string(src), "\nfunc "+n[1]+"(") {
					t.Errorf("%s names %s in %s, which does not define it", doc, n[1], m[1])
				}
			}
		}
	}
	if refs == 0 {
		t.Fatal("found no test named by its file: the pattern no longer reads the docs")
	}
}
