package spec

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/goccy/go-yaml/ast"
)

// A spec of ten thousand models is 3 MB of YAML, and goccy/go-yaml parses
// it at about 4 MB/s: 0.7 s of one core, most of a launch. Almost all of it
// is the models: list, whose entries are independent of each other, so a
// large spec in the usual block style is parsed in chunks of whole entries
// on every core and the chunks' entries are spliced into one tree. The
// result is the tree a whole parse builds, entry for entry and position for
// position; anything the split cannot vouch for falls back to the whole
// parse, so the chunked path can only ever be faster, never different.
//
// Why the chunks parse as the whole does: each chunk is a piece of the file
// exactly as it stands, lines and all — the first from the top of the file
// to its last entry, the others the models: key and their own entries — and
// nothing follows the list (a spec with anything after it takes the whole
// parse). The first chunk starts where the file does. A chunk that starts
// on a real entry reads exactly as the whole parse reads those lines, up to
// its last line; and if it parses cleanly, nothing is left open there (a
// quoted string or a flow collection still open at a chunk's end is a
// syntax error, and a block or plain scalar ends at the next entry's
// indentation anyway), so the next chunk starts on a real entry too. The
// entries found must then be every line findModelsBlock took for one,
// which it checks from the text alone.

// LargeBytes is the size from which a spec counts as large: about a
// thousand models, whose parse is worth spreading over the cores (below
// it one core is quick enough: a 1,000-model spec, 0.3 MB, parses in
// 70 ms) and worth overlapping with other work of a launch (the UI reads
// the incidents' first look meanwhile).
const LargeBytes = 256 << 10

// chunkMinBytes is the smallest spec parsed in chunks, LargeBytes; a test
// lowers it to put small specs through the chunked path.
var chunkMinBytes = LargeBytes

// chunkWorkers is how many chunks a large spec is parsed in: one per core.
var chunkWorkers = func() int { return min(runtime.GOMAXPROCS(0), 8) }

// modelsBlock is where the top-level models: list stands in a block-style
// spec, in 0-based line numbers: the key's line, the first line of every
// entry, and the first line after the list.
type modelsBlock struct {
	key     int
	entries []int
	end     int
}

// findModelsBlock finds the models: list in lines by its layout alone: a
// line that is exactly "models:" (a comment may follow), then entries that
// each start with "- " at one indentation, up to the next line that starts
// at column 0 with anything but a comment or, at indentation 0, another
// entry. It returns false for any other layout (a flow-style or inline
// list, tabs, a second models: key): those take the whole parse.
func findModelsBlock(lines [][]byte) (modelsBlock, bool) {
	var b modelsBlock
	b.key = -1
	for i, l := range lines {
		if isModelsKey(l) {
			if b.key >= 0 {
				return b, false // a duplicate key: the decoder must see it
			}
			b.key = i
		}
	}
	if b.key < 0 {
		return b, false
	}
	indent := -1
	b.end = len(lines)
	for i := b.key + 1; i < len(lines); i++ {
		l := bytes.TrimRight(lines[i], "\r\n")
		n := leadingSpaces(l)
		if n == len(l) || l[n] == '#' {
			continue // blank or comment: it belongs to whichever chunk holds it
		}
		if l[n] == '\t' {
			return b, false
		}
		entry := l[n] == '-' && (n+1 == len(l) || l[n+1] == ' ')
		if indent < 0 {
			if !entry {
				return b, false // models: holds something other than a block list
			}
			indent = n
		}
		if n == 0 && !(indent == 0 && entry) {
			b.end = i
			break
		}
		if n == indent && entry {
			b.entries = append(b.entries, i)
		} else if n < indent {
			return b, false // a list entry at another indentation
		}
	}
	return b, len(b.entries) > 0
}

// isModelsKey reports whether a line is the key "models:" at column 0 with
// nothing after it but spaces and a comment.
func isModelsKey(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("models:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " \r\n")
	return len(rest) == 0 || rest[0] == '#'
}

func leadingSpaces(l []byte) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// chunkedTree is the parse of data in chunks, when data is large and laid
// out as findModelsBlock expects, or nil: then (or when it does not decode
// cleanly) the caller parses data as a whole.
func chunkedTree(file string, data []byte) *ast.File {
	workers := chunkWorkers()
	if len(data) < chunkMinBytes || workers < 2 {
		return nil
	}
	return parseChunks(file, data, workers)
}

// parseChunks is the chunked parse, or nil when it cannot stand in for the
// whole one. Chunk 0 is the file up to its last entry; chunk k is the
// models: key and its own entries, each at its own line (the lines between
// left empty), so every position in every chunk is the position in the
// file.
func parseChunks(file string, data []byte, workers int) *ast.File {
	if bytes.IndexByte(data, '\r') >= 0 {
		// The parser numbers the lines of a "\r\n" file in a way of its
		// own; such a file takes the whole parse rather than the chunks
		// being made to count alike.
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	b, ok := findModelsBlock(lines)
	if !ok || len(b.entries) < 2*workers || b.end != len(lines) {
		return nil
	}
	starts := make([]int, len(lines)+1) // byte offset of each line, and the end
	for i, l := range lines {
		starts[i+1] = starts[i] + len(l)
	}
	// Cut the entries into chunks of about equal bytes, at entry starts.
	per := (starts[b.end] - starts[b.entries[0]]) / workers
	cuts := []int{b.entries[0]}
	for _, e := range b.entries[1:] {
		if starts[e]-starts[cuts[len(cuts)-1]] >= per && len(cuts) < workers {
			cuts = append(cuts, e)
		}
	}
	cuts = append(cuts, b.end)
	texts := make([][]byte, len(cuts)-1)
	texts[0] = data[:starts[cuts[1]]]
	for k := 1; k < len(texts); k++ {
		texts[k] = bytes.Join([][]byte{blank(lines[:b.key]), lines[b.key], blank(lines[b.key+1 : cuts[k]]), data[starts[cuts[k]]:starts[cuts[k+1]]]}, nil)
	}
	trees := make([]*ast.File, len(texts))
	var wg sync.WaitGroup
	for k := range texts {
		wg.Go(func() {
			if f, err := parseYAML(file, texts[k]); err == nil {
				trees[k] = f
			}
		})
	}
	wg.Wait()
	seqs := make([]*ast.SequenceNode, len(trees))
	for k, t := range trees {
		if t == nil {
			return nil
		}
		if seqs[k] = modelsList(t, b.key+1, k > 0); seqs[k] == nil {
			return nil
		}
	}
	for _, s := range seqs[1:] {
		seqs[0].Values = append(seqs[0].Values, s.Values...)
		seqs[0].ValueHeadComments = append(seqs[0].ValueHeadComments, s.ValueHeadComments...)
		seqs[0].Entries = append(seqs[0].Entries, s.Entries...)
	}
	if !entriesAt(seqs[0], b.entries) {
		return nil
	}
	return trees[0]
}

// entriesAt reports whether the list's entries start on exactly the lines
// (0-based) findModelsBlock took for entries, and no others.
func entriesAt(s *ast.SequenceNode, lines []int) bool {
	if len(s.Entries) != len(lines) || len(s.Values) != len(lines) {
		return false
	}
	for i, e := range s.Entries {
		if e == nil || e.Start == nil || e.Start.Position == nil || e.Start.Position.Line != lines[i]+1 {
			return false
		}
	}
	return true
}

// modelsList returns the block list under the models: key at line (1-based)
// in t, or nil. A chunk after the first must hold that key and nothing
// else, in one document.
func modelsList(t *ast.File, line int, only bool) *ast.SequenceNode {
	if only && len(t.Docs) != 1 {
		return nil
	}
	for _, doc := range t.Docs {
		if doc == nil {
			continue
		}
		m, ok := doc.Body.(*ast.MappingNode)
		if !ok || only && len(m.Values) != 1 {
			continue
		}
		for _, kv := range m.Values {
			tk := kv.Key.GetToken()
			if tk == nil || tk.Position == nil || tk.Value != "models" || tk.Position.Line != line || tk.Position.Column != 1 {
				continue
			}
			if s, ok := kv.Value.(*ast.SequenceNode); ok && !s.IsFlowStyle {
				return s
			}
		}
	}
	return nil
}

// blank is as many empty lines as lines.
func blank(lines [][]byte) []byte {
	return bytes.Repeat([]byte("\n"), len(lines))
}
