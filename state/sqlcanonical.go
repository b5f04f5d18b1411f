package state

import "strings"

// CanonicalSQL is sql with its comments removed and every run of whitespace
// outside string literals, quoted identifiers and dollar-quoted bodies
// collapsed to one space (none at either end). Two texts that differ only
// in comments and layout give the same result, so a model's definition
// fingerprint does not change when someone re-indents or documents its SQL;
// a change inside a literal ('a  b', "Col", $$…$$) still shows, because it
// changes what the statement does. A comment counts as whitespace: a/**/b
// stays two tokens.
func CanonicalSQL(sql string) string {
	var b strings.Builder
	b.Grow(len(sql))
	space := false // whitespace is pending before the next token
	emit := func(s string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s)
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			space = true
			i++
		case c == '\'' || c == '"' || c == '`':
			j := quotedEnd(sql, i, c)
			emit(sql[i:j])
			i = j
		case isCommentStart(sql, i):
			space = true
			i = commentEnd(sql, i)
		case c == '$':
			j := dollarQuotedEnd(sql, i)
			emit(sql[i:j])
			i = j
		default:
			emit(sql[i : i+1])
			i++
		}
	}
	return b.String()
}
