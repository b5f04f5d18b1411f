package executor

import (
	"cmp"
	"github.com/bollhav/bollhav/engine/spec"
	"regexp"
	"slices"
	"strings"
)

// redactor removes secrets from command output before it becomes a unit's
// error or a log line. A failing loader often prints its connection string
// or echoes its environment; the error is stored in the state database and
// shown to everyone with a UI, so it must not carry what the environment
// kept private.
type redactor struct {
	values *strings.Replacer
}

// minSecretLen keeps short values out of the replacer: redacting "1" or
// "true" would garble the message and protect nothing.
const minSecretLen = 5

// secretNameParts mark an environment variable as holding a secret.
var secretNameParts = []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN", "APIKEY", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", "DSN", "AUTH"}

var (
	// urlPassword is the password of user:password@ in any URL.
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)[^/\s@]+@`)
	// kvPassword is password=… in a key/value DSN or a config dump.
	kvPassword = regexp.MustCompile(`(?i)\b(password|passwd|pwd)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s;,&]+)`)
)

// newRedactor builds a redactor for the values of every variable of environ
// whose name looks secret or is listed in named (the DSN variables the spec
// names, whatever they are called).
func newRedactor(environ []string, named []string) *redactor {
	type secret struct{ name, value string }
	var secrets []secret
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < minSecretLen {
			continue
		}
		if slices.Contains(named, name) || secretName(name) {
			secrets = append(secrets, secret{name, value})
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(secrets, func(a, b secret) int { return cmp.Compare(len(b.value), len(a.value)) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s.value, "[redacted "+s.name+"]")
	}
	return &redactor{values: strings.NewReplacer(pairs...)}
}

func secretName(name string) bool {
	up := strings.ToUpper(name)
	if strings.HasSuffix(up, "_KEY") {
		return true
	}
	for _, part := range secretNameParts {
		if strings.Contains(up, part) {
			return true
		}
	}
	return false
}

// apply returns s with every known secret value, URL password and
// password=… value replaced.
func (r *redactor) apply(s string) string {
	s = r.values.Replace(s)
	s = urlPassword.ReplaceAllString(s, "${1}[redacted]@")
	return kvPassword.ReplaceAllString(s, "${1}${2}[redacted]")
}

// secretEnvNames are the variables the spec says hold DSNs for m: the
// model's own connection and its sources' dsn_env_var.
func secretEnvNames(m *spec.Model) []string {
	var names []string
	if m.Connection != nil && m.Connection.DSNEnvVar != "" {
		names = append(names, m.Connection.DSNEnvVar)
	}
	for _, s := range m.Upstream {
		if s.Model != nil && s.Model.DSNEnvVar != "" {
			names = append(names, s.Model.DSNEnvVar)
		}
	}
	return names
}
