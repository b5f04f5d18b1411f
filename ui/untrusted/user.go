package untrusted

import (
	"strconv"
	"strings"
	"unicode"
)

// MaxUserLen bounds a user name in logs and the audit log.
const MaxUserLen = 32

// UserName makes a user name that bollhav did not choose — one an SSH
// client sent, a local BOLLHAV_ACTOR or $USER — safe to store in the audit
// log and draw: control and other non-printing characters are dropped, the
// length is bounded to MaxUserLen characters, and a name that is not plain
// ([A-Za-z0-9._@-]) is quoted, so that "carol SHA256:<someone else's key>"
// reads as one quoted name and cannot pass for another actor. Unlike Line it
// drops rather than escapes: a name is an identity, kept short and plain.
func UserName(user string) string {
	var b strings.Builder
	n := 0
	for _, r := range user {
		if !unicode.IsPrint(r) {
			continue
		}
		if n == MaxUserLen {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	clean := b.String()
	plain := clean != ""
	for _, r := range clean {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._@-", r))) {
			plain = false
			break
		}
	}
	if plain {
		return clean
	}
	return strconv.Quote(clean)
}
