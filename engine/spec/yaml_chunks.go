package spec

import (
	"bytes"
	"runtime"
	"slices"

	"github.com/goccy/go-yaml/ast"
)

// A spec of ten thousand models is 3 MB of YAML, and goccy/go-yaml parses
// it at about 4 MB/s: 0.7 s of one core, most of a launch. Almost all of it
// is the models: list, whose entries are independent of each other, so a
// large spec in the usual block style is parsed in chunks of whole entries
// on every core, and each chunk's entries are decoded as soon as the
// chunks before them are (parseInChunks), so the syntax tree of the whole
// file never exists at once: a tree holds about 75 times the bytes it was
// parsed from, 0.8 GB for a 10 MiB spec of 60,000 models. The result is
// the spec a whole parse gives, model for model and position for position;
// anything the split cannot vouch for falls back to the whole parse, so
// the chunked path can only ever be faster and smaller, never different.
//
// Why the chunks parse as the whole does: each chunk is a piece of the file
// exactly as it stands, lines and all — the first from the top of the file
// to its last entry, the others the models: key's line and their own
// entries, their positions then moved to where the lines stand in the file
// — and nothing follows the list (a spec with anything after it takes the
// whole parse). The first chunk starts where the file does. A chunk that
// starts on a real entry reads exactly as the whole parse reads those
// lines, up to its last line; and if it parses cleanly, nothing is left
// open there (a quoted string or a flow collection still open at a chunk's
// end is a syntax error, and a block or plain scalar ends at the next
// entry's indentation anyway), so the next chunk starts on a real entry
// too. The entries found must then be every line findModelsBlock took for
// one, which it checks from the text alone. An alias resolves to the
// latest anchor of its name before it, which is in its own chunk or an
// earlier one: every chunk's anchors are collected before its models are
// decoded, and a chunk holding one is kept until the end.

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

// chunkBytes bounds a chunk of a large spec. A chunk's tree is dropped as
// soon as its models are decoded, so the parse holds the trees of the
// chunks in flight (one per worker, and the first), not the file's: of
// 16 KiB, about 1.2 MB each. Its garbage is bounded alike: a parse
// allocates some 200 times its bytes on the way, and the collector keeps
// pace with a small heap rather than a large one. A smaller spec is cut
// into one chunk per worker, the fewest that keep them all busy. At 16 KiB
// a 10 MiB spec is 640 chunks, and parses no slower than in two.
var chunkBytes = 16 << 10

// parseInChunks is the parse of a large spec in chunks, streamed: the
// chunks are parsed on every core, a few ahead of the decoder, and each
// chunk's models are decoded (decodeTree's more) as soon as it and those
// before it are parsed, and its tree then dropped — unless it holds an
// anchor, which a later alias may still resolve to. It reports took=false
// when data is not large, not laid out for it (findModelsBlock), or a
// chunk does not parse cleanly or not into the entries findModelsBlock
// found: then the caller parses data whole. Otherwise it returns the spec
// or its problems, as decodeTree of the whole parse would.
func parseInChunks(file string, data []byte) (sp *Spec, errs Errors, took bool) {
	workers := chunkWorkers()
	if len(data) < chunkMinBytes || workers < 2 {
		return nil, nil, false
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		// The parser numbers the lines of a "\r\n" file in a way of its
		// own; such a file takes the whole parse rather than the chunks
		// being made to count alike.
		return nil, nil, false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	b, ok := findModelsBlock(lines)
	if !ok || len(b.entries) < 2*workers || b.end != len(lines) {
		return nil, nil, false
	}
	starts := make([]int, len(lines)+1) // byte offset of each line, and the end
	for i, l := range lines {
		starts[i+1] = starts[i] + len(l)
	}
	// Cut the entries into chunks of about equal bytes, at entry starts:
	// one per worker, or more when that would make them larger than
	// chunkBytes.
	total := starts[b.end] - starts[b.entries[0]]
	per := max(total/workers, 1)
	if per > chunkBytes {
		per = chunkBytes
	}
	cuts := []int{b.entries[0]} // the first line of each chunk's entries
	first := []int{0}           // the index in b.entries of each chunk's first entry
	for i, e := range b.entries[1:] {
		if starts[e]-starts[cuts[len(cuts)-1]] >= per {
			cuts, first = append(cuts, e), append(first, i+1)
		}
	}
	cuts, first = append(cuts, b.end), append(first, len(b.entries))
	n := len(cuts) - 1
	// text is chunk k: chunk 0 is the file up to its last entry; chunk k
	// is the models: key's line and its own entries, whose positions
	// parseYAMLAt moves down to where they stand in the file.
	text := func(k int) []byte {
		if k == 0 {
			return data[:starts[cuts[1]]]
		}
		return slices.Concat(lines[b.key], data[starts[cuts[k]]:starts[cuts[k+1]]])
	}
	// The parses run ahead of the decoder by at most workers chunks.
	trees := make([]chan *ast.File, n)
	for k := range trees {
		trees[k] = make(chan *ast.File, 1)
	}
	slots := make(chan struct{}, workers)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for k := range n {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			go func() {
				dLine, dOffset := 0, 0
				if k > 0 {
					dLine, dOffset = cuts[k]-1, starts[cuts[k]]-len(lines[b.key])
				}
				f, err := parseYAMLAt(file, text(k), dLine, dOffset)
				if err != nil {
					f = nil
				}
				trees[k] <- f
			}()
		}
	}()
	// list is chunk k's entries, once parsed and found where
	// findModelsBlock found them, or nil.
	list := func(k int) (*ast.File, *ast.SequenceNode) {
		t := <-trees[k]
		if t == nil {
			return nil, nil
		}
		keyLine := b.key + 1
		if k > 0 {
			keyLine = cuts[k]
		}
		s := modelsList(t, keyLine, k > 0)
		if s == nil || !entriesAt(s, b.entries[first[k]:first[k+1]]) {
			return nil, nil
		}
		return t, s
	}
	t0, s0 := list(0)
	if s0 == nil {
		return nil, nil, false
	}
	took = true
	more := func(yield func(*ast.SequenceNode) bool) {
		<-slots // chunk 0's: decodeTree has it
		for k := 1; k < n; k++ {
			_, s := list(k)
			if s == nil {
				took = false
				return
			}
			if !yield(s) {
				return
			}
			<-slots
		}
	}
	sp, errs = decodeTree(file, t0, more)
	return sp, errs, took
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
