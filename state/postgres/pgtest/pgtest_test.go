package pgtest

import (
	"fmt"
	"strings"
	"testing"
)

// verdictTB records how DSN ends a test instead of ending it.
type verdictTB struct {
	testing.TB
	skipped, failed string
}

func (v *verdictTB) Helper()                        {}
func (v *verdictTB) Skipf(format string, a ...any)  { v.skipped = fmt.Sprintf(format, a...) }
func (v *verdictTB) Fatalf(format string, a ...any) { v.failed = fmt.Sprintf(format, a...) }

// TestDSNWithoutServer: no server means a skip with a one-line reason, or a
// failure under BOLLHAV_REQUIRE_PG=1; neither shows the password.
func TestDSNWithoutServer(t *testing.T) {
	const secret = "pw-Sentinel-91c"
	t.Setenv("BOLLHAV_TEST_DSN", "postgres://postgres:"+secret+"@127.0.0.1:1/test?sslmode=disable")

	t.Setenv("BOLLHAV_REQUIRE_PG", "")
	v := &verdictTB{TB: t}
	DSN(v)
	if v.skipped == "" || v.failed != "" {
		t.Fatalf("without BOLLHAV_REQUIRE_PG: skipped %q, failed %q; want a skip", v.skipped, v.failed)
	}
	if strings.Contains(v.skipped, secret) || strings.Contains(v.skipped, "\n") || !strings.Contains(v.skipped, "BOLLHAV_TEST_DSN") {
		t.Errorf("skip reason %q: want one line naming BOLLHAV_TEST_DSN, without the password", v.skipped)
	}

	t.Setenv("BOLLHAV_REQUIRE_PG", "1")
	v = &verdictTB{TB: t}
	DSN(v)
	if v.failed == "" || strings.Contains(v.failed, secret) {
		t.Errorf("with BOLLHAV_REQUIRE_PG=1: failed %q, skipped %q; want a failure without the password", v.failed, v.skipped)
	}
}
