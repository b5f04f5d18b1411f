package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository must stand alone: a clone holds everything its Markdown
// points at. These patterns find where a document points.
var (
	// inlineLink is [text](target) and ![alt](target), with an optional
	// "title" after the target.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink is a reference definition: [label]: target.
	refLink = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// htmlLink is an href or src attribute in inline HTML.
	htmlLink = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*["']([^"']+)["']`)
	// codeSpan is inline code, where text is shown, not followed.
	codeSpan = regexp.MustCompile("`+[^`\n]*`+")
	// scheme is a URL with a scheme (https:, mailto:), which leaves the
	// repository on purpose.
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// outsideMentions are names of documents that live beside the repository,
// not in it: a reader of a clone has none of them, even in a code span.
var outsideMentions = []string{"../shared", "shared/seeds", "shared/DESIGN.md", "DESIGN.md"}

// markdownProblem is one place where a Markdown file sends its reader out
// of the repository, or to a file the repository does not have.
type markdownProblem struct {
	file string
	line int
	msg  string
}

// checkMarkdown returns the problems of one Markdown file at rel (a
// slash-separated path from the repository root) with content src. exists
// reports whether a slash-separated path inside the repository exists.
func checkMarkdown(rel, src string, exists func(string) bool) []markdownProblem {
	var out []markdownProblem
	inFence := false
	var text strings.Builder // the document outside fenced code, line for line
	for i, line := range strings.Split(src, "\n") {
		for _, m := range outsideMentions {
			if strings.Contains(line, m) {
				out = append(out, markdownProblem{rel, i + 1, "mentions " + m + ", which is not in this repository"})
				break // one problem a line: the names overlap
			}
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			text.WriteString("\n")
			continue
		}
		if inFence {
			text.WriteString("\n")
			continue
		}
		text.WriteString(codeSpan.ReplaceAllString(line, "``") + "\n")
	}
	lines := strings.Split(text.String(), "\n")
	for i, line := range lines {
		var targets []string
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
		}
		for _, t := range targets {
			if msg := checkTarget(rel, t, exists); msg != "" {
				out = append(out, markdownProblem{rel, i + 1, msg})
			}
		}
	}
	return out
}

// checkTarget judges one link target of the file at rel: a URL or an anchor
// is fine; a path must stay inside the repository and name a file or folder
// it has.
func checkTarget(rel, target string, exists func(string) bool) string {
	if target == "" || strings.HasPrefix(target, "#") || scheme.MatchString(target) {
		return ""
	}
	p, _, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "/") {
		return "links to " + target + ", an absolute path: use a path relative to the file"
	}
	joined := path.Join(path.Dir(rel), p)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "links to " + target + ", outside the repository"
	}
	if !exists(joined) {
		return "links to " + target + ", which the repository does not have"
	}
	return ""
}

// TestMarkdownStaysInTheRepository fails when a Markdown file links outside
// the repository (a relative link that escapes its root, an absolute path),
// to a file the repository does not have, or names a document that lives
// beside it: a clone must be readable on its own.
func TestMarkdownStaysInTheRepository(t *testing.T) {
	exists := func(p string) bool {
		_, err := os.Stat(filepath.FromSlash(p))
		return err == nil
	}
	files := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// .git is not the project's; bollhav-demo is what `go run .
			// demo` leaves behind, ignored by git.
			if p != "." && (d.Name() == ".git" || d.Name() == "bollhav-demo") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(p), ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, pr := range checkMarkdown(filepath.ToSlash(p), string(b), exists) {
			t.Errorf("%s:%d: %s", pr.file, pr.line, pr.msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("found no Markdown file: the walk did not start at the repository root")
	}
}

// TestCheckMarkdownFindsEscapes shows the check can fail: each document
// below breaks the rule once, and a well-behaved one passes.
func TestCheckMarkdownFindsEscapes(t *testing.T) {
	have := map[string]bool{"README.md": true, "docs": true, "docs/design.md": true, "docs/semantics.md": true}
	exists := func(p string) bool { return have[p] }
	bad := map[string]struct{ file, src string }{
		"escaping link":      {"README.md", "The design is [here](../other/design.md)."},
		"escaping from docs": {"docs/design.md", "See [notes](../../notes/000.txt)."},
		"mention in code":    {"README.md", "The design is `../shared/DESIGN.md`."},
		"outside document":   {"docs/design.md", "As DESIGN.md says."},
		"reference link":     {"docs/design.md", "[d]: ../../x.md"},
		"html link":          {"README.md", `<a href="../other/README.md">other</a>`},
		"absolute path":      {"README.md", "[x](/etc/passwd)"},
		"missing file":       {"docs/design.md", "[ui](ui.md)"},
	}
	for name, c := range bad {
		if got := checkMarkdown(c.file, c.src, exists); len(got) != 1 {
			t.Errorf("%s: %q gives %d problems, want 1: %v", name, c.src, len(got), got)
		}
	}
	good := "# Title\n\n[design](docs/design.md#architecture), [up](#title), [web](https://example.com),\n" +
		"`[not](../a/link)` and\n\n```\n[not](../a/link either)\n```\n[semantics](docs/semantics.md)\n"
	if got := checkMarkdown("README.md", good, exists); len(got) != 0 {
		t.Errorf("a document that stays inside gives %v", got)
	}
	if got := checkMarkdown("docs/design.md", "[readme](../README.md), [sem](semantics.md)", exists); len(got) != 0 {
		t.Errorf("relative links up to the root give %v", got)
	}
}
