package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Parsing for the spec loader: goccy/go-yaml lexes and parses the file into
// an AST, which the decoder (decoder.go) walks by hand instead of
// unmarshalling into structs, because only the AST knows where each key and
// value stands, and every error must name its line and column.

const (
	// maxNesting bounds how deep collections may nest. A real spec nests
	// about ten levels; the parser's cost grows with the square of the depth,
	// so a file of ten million "[" must be refused before it is parsed.
	maxNesting = 64
	// maxVisits bounds the nodes one load may visit, aliases expanded: an
	// alias bomb (each anchor holding ten aliases of the previous one) would
	// otherwise expand a small file into billions of values.
	maxVisits = 5_000_000
)

// parseYAML lexes and parses data, refusing input nested deeper than
// maxNesting. Malformed YAML is one Error at the parser's position.
func parseYAML(file string, data []byte) (f *ast.File, err *Error) {
	return parseYAMLAt(file, data, 0, 0)
}

// parseYAMLAt is parseYAML of a piece of a file whose first line stands
// dLine lines and dOffset bytes further down in the file: every token's
// position is moved by as much before the parse, so the tree (and any
// error) is positioned in the file. The parser compares only lines of
// tokens with each other, and the tokens it makes take their positions
// from the lexer's, so the tree is the one the same lines give in place.
func parseYAMLAt(file string, data []byte, dLine, dOffset int) (f *ast.File, err *Error) {
	defer func() {
		// The parser should never panic; if it does on some input, that input
		// is a bad spec, not a reason to take the process down.
		if r := recover(); r != nil {
			f, err = nil, &Error{Pos: Position{File: file}, Msg: "cannot parse YAML: " + printable(fmt.Sprint(r))}
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if dLine != 0 || dOffset != 0 {
		moved := make(map[*token.Position]bool, len(tokens))
		for _, tk := range tokens {
			if p := tk.Position; p != nil && !moved[p] {
				moved[p] = true
				p.Line += dLine
				p.Offset += dOffset
			}
		}
	}
	if tk := tooDeep(tokens); tk != nil {
		return nil, &Error{Pos: tokenPos(file, tk), Msg: fmt.Sprintf("YAML nested more than %d levels deep", maxNesting)}
	}
	f, perr := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if perr != nil {
		se := &Error{Pos: Position{File: file}, Msg: "invalid YAML: " + printable(perr.Error())}
		var ye yaml.Error
		if errors.As(perr, &ye) {
			se.Msg = "invalid YAML: " + printable(ye.GetMessage())
			if tk := ye.GetToken(); tk != nil {
				se.Pos = tokenPos(file, tk)
			}
		}
		return nil, se
	}
	return f, nil
}

// tooDeep returns the first token at which collections nest deeper than
// maxNesting, or nil. Flow collections count their brackets; block
// collections count the stack of increasing indentation columns of their
// entries and keys ("- - - x" is three levels).
func tooDeep(tokens token.Tokens) *token.Token {
	flow := 0
	var block []int
	push := func(col int) {
		for len(block) > 0 && block[len(block)-1] >= col {
			block = block[:len(block)-1]
		}
		block = append(block, col)
	}
	for i, tk := range tokens {
		if tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.DocumentHeaderType, token.DocumentEndType:
			flow, block = 0, block[:0]
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.SequenceEntryType, token.MappingKeyType:
			if flow == 0 {
				push(tk.Position.Column)
			}
		case token.MappingValueType:
			if flow == 0 && i > 0 && tokens[i-1].Position != nil {
				push(tokens[i-1].Position.Column)
			}
		}
		if flow+len(block) > maxNesting {
			return tk
		}
	}
	return nil
}

// printable escapes control and other non-graphic characters, so that text
// taken from the file (a parser message quoting a bad byte, an alias name)
// cannot carry terminal escape sequences into an error message.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsGraphic(r) && r != utf8.RuneError || r == ' ' {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

func tokenPos(file string, tk *token.Token) Position {
	if tk == nil || tk.Position == nil {
		return Position{File: file}
	}
	return Position{File: file, Line: tk.Position.Line, Column: tk.Position.Column}
}
