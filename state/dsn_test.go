package state

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDSNKinds(t *testing.T) {
	sp := filepath.Join("/srv", "project")
	for _, tc := range []struct {
		dsn, kind, path, redacted string
	}{
		{"", KindSQLite, filepath.Join(sp, ".bollhav", "state.db"), "sqlite:" + filepath.Join(sp, ".bollhav", "state.db")},
		{"   ", KindSQLite, filepath.Join(sp, ".bollhav", "state.db"), ""},
		{"sqlite:/var/lib/bollhav/state.db", KindSQLite, "/var/lib/bollhav/state.db", "sqlite:/var/lib/bollhav/state.db"},
		{"sqlite:///var/lib/state.db", KindSQLite, "/var/lib/state.db", ""},
		{"sqlite:rel/state.db", KindSQLite, "rel/state.db", ""},
		{"SQLite:x.db", KindSQLite, "x.db", ""},
		{"./state.db", KindSQLite, "./state.db", ""},
		{"/abs/state.db", KindSQLite, "/abs/state.db", ""},
		{"state.db", KindSQLite, "state.db", ""},
		{`C:\data\state.db`, KindSQLite, `C:\data\state.db`, ""},
		{"x=1.db", KindSQLite, "x=1.db", ""},
		{"postgres://bollhav@db.internal:5432/state?sslmode=require", KindPostgres, "", "postgres://bollhav@db.internal:5432/state?sslmode=require"},
		{"postgresql://db/state", KindPostgres, "", "postgresql://db/state"},
		{"POSTGRES://db/state", KindPostgres, "", ""},
		{"host=localhost dbname=bollhav", KindPostgres, "", "host=localhost dbname=bollhav"},
		{"dbname = bollhav  user=ops", KindPostgres, "", "dbname=bollhav user=ops"},
		{"host=/var/run/postgresql application_name='bollhav ui'", KindPostgres, "", "host=/var/run/postgresql application_name='bollhav ui'"},
	} {
		d, err := ParseDSN(tc.dsn, sp)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", tc.dsn, err)
			continue
		}
		if d.Kind != tc.kind || d.Path != tc.path {
			t.Errorf("ParseDSN(%q) = %s %q, want %s %q", tc.dsn, d.Kind, d.Path, tc.kind, tc.path)
		}
		if tc.redacted != "" && d.Redacted() != tc.redacted {
			t.Errorf("ParseDSN(%q).Redacted() = %q, want %q", tc.dsn, d.Redacted(), tc.redacted)
		}
		if tc.kind == KindPostgres && d.ConnString() != strings.TrimSpace(tc.dsn) {
			t.Errorf("ParseDSN(%q).ConnString() = %q, want the DSN as given", tc.dsn, d.ConnString())
		}
	}
}

func TestParseDSNErrors(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"mysql://root@db/state", `unsupported DSN scheme "mysql"`},
		{"redis://db", `unsupported DSN scheme "redis"`},
		{"sqlite:", "names no file"},
		{"host=db dbname='state", `quoted value of "dbname" is not terminated`},
		{"postgres://db:port/x", "does not parse as a URL"},
		// A misspelt keyword is a DSN with a typo, never a file to create
		// (its name would hold the password).
		{"hots=127.0.0.1 password=pw", `unknown keyword "hots" (did you mean "host"?)`},
		{"host=db hots=other", `unknown keyword "hots"`},
		{"host=db search_path=x", `a server setting goes in options='-c name=value'`},
	} {
		_, err := ParseDSN(tc.dsn, ".")
		if err == nil {
			t.Errorf("ParseDSN(%q) succeeded, want an error", tc.dsn)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDSN(%q) = %q, want it to say %q", tc.dsn, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseDSN(%q) error spans lines: %q", tc.dsn, err)
		}
	}
}

// TestDSNNeverShowsPassword puts a sentinel password into every form a DSN
// can carry one and checks every way a DSN or its error can be shown.
func TestDSNNeverShowsPassword(t *testing.T) {
	const secret = "hunter2SENTINEL"
	leaks := func(s string) bool {
		return strings.Contains(s, "hunter2") || strings.Contains(s, "SENTINEL") || strings.Contains(s, "hunt%65r2")
	}
	valid := []string{
		"postgres://alice:" + secret + "@db.example.com:5432/bollhav?sslmode=require",
		"postgresql://alice:" + secret + "@db/x",
		"postgres://alice:hunt%65r2SENTINEL@db/x",
		"postgres://alice:hunter2%40SENTINEL@db/x",
		"postgres://alice:hunter2:SENTINEL@db/x",
		"postgres://db/x?user=alice&password=" + secret,
		"postgres://db/x?sslmode=require&PASSWORD=" + secret + "&application_name=ui",
		"postgres://db/x?pass%77ord=" + secret,
		"postgres://db/x?sslpassword=" + secret,
		"postgres://alice:" + secret + "@db/x?password=" + secret + "#frag",
		"host=db user=alice password=" + secret + " dbname=x",
		"host=db password='hunter2 SENTINEL' dbname=x",
		`host=db password='hunter2\'SENTINEL' dbname=x`,
		"host=db password = " + secret,
		"dbname=x sslpassword=" + secret,
	}
	invalid := []string{
		"mysql://alice:" + secret + "@db/x",
		"host=db password='" + secret,
		"host=db password=" + secret + " dbname='x",
		"postgres://alice:hunter2/SENTINEL@db/x",
		"postgres://alice:hunter2?SENTINEL@db/x",
		"postgres://alice:hunter2#SENTINEL@db/x",
		"postgres://alice:hunter2@SENTINEL@db:port/x",
		"postgres://alice:" + secret + "@db:badport/x",
		"postgres://alice:hunter2 SENTINEL@db/x\x7f",
	}
	for _, dsn := range valid {
		d, err := ParseDSN(dsn, ".")
		if err != nil {
			if leaks(err.Error()) {
				t.Errorf("ParseDSN error shows the password: %q", err)
			}
			continue
		}
		if d.Kind != KindPostgres {
			t.Errorf("ParseDSN(<%s>) kind %s, want postgres", d, d.Kind)
		}
		js, _ := json.Marshal(d)
		for _, shown := range []string{d.Redacted(), d.String(), fmt.Sprint(d), fmt.Sprintf("%v %+v %#v %s %q", d, d, d, d, d), string(js)} {
			if leaks(shown) {
				t.Errorf("a DSN shows its password: %q", shown)
			}
		}
		if !strings.Contains(d.Redacted(), "xxxxx") {
			t.Errorf("Redacted() = %q does not mark the hidden password", d.Redacted())
		}
	}
	for _, dsn := range invalid {
		d, err := ParseDSN(dsn, ".")
		if err == nil {
			// A lenient parse is fine as long as nothing leaks.
			if shown := fmt.Sprintf("%v %#v", d, d); leaks(shown) {
				t.Errorf("a DSN shows its password: %q", shown)
			}
			continue
		}
		if leaks(err.Error()) || leaks(fmt.Sprintf("%+v %#v", err, err)) {
			t.Errorf("ParseDSN error shows the password: %q", err)
		}
	}
}
