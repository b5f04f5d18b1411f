package spec

import (
	"strings"
	"unicode"
)

// transactionKeywords start a statement that begins, ends or splits a
// transaction, in PostgreSQL's or SQLite's spelling. A unit's sql or query
// runs inside the transaction that also records the unit applied; a
// statement from this list would commit the unit's data on its own (or roll
// back half of it), and the exactly-once guarantee would no longer hold.
var transactionKeywords = map[string]bool{
	"BEGIN": true, "START": true, "COMMIT": true, "END": true, "ROLLBACK": true, "ABORT": true,
	"SAVEPOINT": true, "RELEASE": true, "PREPARE": true,
}

// transactionStatement returns the keyword of the first statement in sql
// that controls the transaction (COMMIT, ROLLBACK, …), if any. It splits
// sql into statements the way the databases do — string literals, quoted
// identifiers, comments and dollar-quoted bodies are skipped, and a CREATE
// TRIGGER's BEGIN … END body is one statement — so a BEGIN inside a
// function body or a word in a string is not mistaken for one. PREPARE
// counts only as PREPARE TRANSACTION (two-phase commit); START only as
// START TRANSACTION.
func transactionStatement(sql string) (string, bool) {
	for _, words := range statementWords(sql) {
		if len(words) == 0 || !transactionKeywords[words[0]] {
			continue
		}
		switch words[0] {
		case "PREPARE", "START":
			if len(words) > 1 && words[1] == "TRANSACTION" {
				return words[0] + " TRANSACTION", true
			}
		default:
			return words[0], true
		}
	}
	return "", false
}

// statementWords splits sql into statements and returns each one's
// unquoted words, upper-cased (at most the first few of a statement outside
// a trigger body are needed, but all are kept for simplicity).
func statementWords(sql string) [][]string {
	var (
		out     [][]string
		words   []string
		trigger bool // the statement is a CREATE … TRIGGER
		depth   int  // BEGIN/CASE nesting inside a trigger body
	)
	flush := func() {
		out = append(out, words)
		words, trigger, depth = nil, false, 0
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ';':
			if depth == 0 {
				flush()
			}
			i++
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = skipBlockComment(sql, i)
		case c == '\'':
			escapes := i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e') && (i == 1 || !isWordByte(sql[i-2]))
			i = skipQuoted(sql, i, '\'', escapes)
		case c == '"' || c == '`':
			i = skipQuoted(sql, i, c, false)
		case c == '[': // a SQLite [identifier], or a PostgreSQL array index
			if j := strings.IndexByte(sql[i:], ']'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
		case c == '$':
			i = skipDollar(sql, i)
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			w := strings.ToUpper(sql[i:j])
			if len(words) > 0 && words[0] == "CREATE" && w == "TRIGGER" && depth == 0 {
				trigger = true
			}
			if trigger {
				switch w {
				case "BEGIN", "CASE":
					depth++
				case "END":
					depth = max(depth-1, 0)
				}
			}
			// E'…' is an escape string: the E belongs to the literal.
			if !(j < len(sql) && sql[j] == '\'' && (w == "E")) {
				words = append(words, w)
			}
			i = j
		default:
			i++
		}
	}
	if len(words) > 0 {
		flush()
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

// skipQuoted returns the index after the literal or identifier opened by q
// at i; a doubled quote is an escaped quote, and with backslashes a
// backslash escapes the next byte (PostgreSQL's E'…').
func skipQuoted(sql string, i int, q byte, backslashes bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if backslashes {
				j++
			}
		case q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

// skipBlockComment returns the index after the /* … */ comment at i;
// PostgreSQL nests them.
func skipBlockComment(sql string, i int) int {
	depth := 0
	for j := i; j < len(sql)-1; j++ {
		switch sql[j : j+2] {
		case "/*":
			depth++
			j++
		case "*/":
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(sql)
}

// skipDollar returns the index after a PostgreSQL dollar-quoted string
// ($$…$$ or $tag$…$tag$) starting at i, or i+1 when the $ opens none (a
// positional parameter like $1).
func skipDollar(sql string, i int) int {
	j := i + 1
	for j < len(sql) && (sql[j] == '_' || unicode.IsLetter(rune(sql[j])) || (j > i+1 && unicode.IsDigit(rune(sql[j])))) {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i + 1
	}
	tag := sql[i : j+1]
	if k := strings.Index(sql[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag)
	}
	return len(sql)
}
