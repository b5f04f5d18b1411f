package state

import "strings"

// BindNames rewrites the named parameters :since and :until in a SQL text
// with rewrite(name), and returns the new text and the names in the order
// they occurred. It reads the text the way a SQL lexer would, so a colon
// inside a string literal, a quoted identifier, a comment, a dollar-quoted
// body or a PostgreSQL cast (::) is left alone, and other :words (a JSON
// path, a named parameter the engine does not bind) are kept as written.
func BindNames(sql string, rewrite func(name string) string) (string, []string) {
	var (
		b     strings.Builder
		names []string
	)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := quotedEnd(sql, i, c)
			b.WriteString(sql[i:j])
			i = j
		case isCommentStart(sql, i):
			j := commentEnd(sql, i)
			b.WriteString(sql[i:j])
			i = j
		case c == '$':
			j := dollarQuotedEnd(sql, i)
			b.WriteString(sql[i:j])
			i = j
		case c == ':' && i+1 < len(sql) && sql[i+1] == ':':
			b.WriteString("::")
			i += 2
		case c == ':' && (i == 0 || !identByte(sql[i-1])):
			j := i + 1
			for j < len(sql) && identByte(sql[j]) {
				j++
			}
			name := sql[i+1 : j]
			if name == "since" || name == "until" {
				names = append(names, name)
				b.WriteString(rewrite(name))
			} else {
				b.WriteString(sql[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), names
}

// isCommentStart reports whether a SQL comment, "--" or "/*", starts at
// s[i].
func isCommentStart(s string, i int) bool {
	return strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*")
}

// commentEnd is the index just past the comment starting at s[i]: a "--"
// comment runs to its line's end (the newline not included), a "/*" one
// through its "*/"; either runs to the end of s when it does not close.
func commentEnd(s string, i int) int {
	if strings.HasPrefix(s[i:], "--") {
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	}
	if j := strings.Index(s[i+2:], "*/"); j >= 0 {
		return i + 2 + j + 2
	}
	return len(s)
}

// quotedEnd returns the index after the literal or identifier opened by q
// at i; a doubled quote inside is an escaped one.
func quotedEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// dollarQuotedEnd returns the index after a PostgreSQL dollar-quoted string
// ($$…$$ or $tag$…$tag$) starting at i, or i+1 when the $ opens none (a
// positional parameter such as $1).
func dollarQuotedEnd(s string, i int) int {
	j := i + 1
	for j < len(s) && identByte(s[j]) && !(j == i+1 && s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i + 1
	}
	tag := s[i : j+1]
	k := strings.Index(s[j+1:], tag)
	if k < 0 {
		return len(s)
	}
	return j + 1 + k + len(tag)
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
