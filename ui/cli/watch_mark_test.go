package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// wmPrefill creates pending units of raw.a for hours [from, to) in env.
func (w *suWorld) wmPrefill(t *testing.T, env string, from, to int) {
	t.Helper()
	var ws []state.Window
	for i := from; i < to; i++ {
		ws = append(ws, suHW(i, i+1))
	}
	if _, err := w.store.Prefill(context.Background(), state.PrefillRequest{Env: env, Model: "raw.a", Windows: ws, Now: suH(0)}); err != nil {
		t.Fatal(err)
	}
}

// wmSnapshot is every unit of the environment, as text.
func (w *suWorld) wmSnapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := w.store.ScanUnits(context.Background(), state.UnitQuery{}, func(u state.Unit) error {
		fmt.Fprintf(&b, "%s %s %s %s %v %d\n", u.Model, u.Window, u.Status, rfcOrDash(u.AppliedAt), u.Error, u.Attempts)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wmStartWatch runs watch in-process and returns once it follows the feed.
func wmStartWatch(t *testing.T, args []string) (out *enginetest.SyncBuffer, done <-chan int) {
	t.Helper()
	out, errb := &enginetest.SyncBuffer{}, &enginetest.SyncBuffer{}
	ch := make(chan int, 1)
	go func() { ch <- Main(args, Streams{In: strings.NewReader(""), Out: out, Err: errb}) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "following changes") {
		select {
		case code := <-ch:
			t.Fatalf("watch ended with %d before following: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not start: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out, ch
}

func wmWait(t *testing.T, done <-chan int, out *enginetest.SyncBuffer) {
	t.Helper()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("watch exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("watch did not stop after --count; printed so far:\n%s", out.String())
	}
}

func TestWatchPrintsTheTransitionsOfAConcurrentMark(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		if code, _, errOut := run(t, w.args("apply", "--env", "pr1")...); code != 0 {
			t.Fatal(errOut)
		}
		w.wmPrefill(t, "", 0, 6) // before watch starts: not printed
		out, done := wmStartWatch(t, w.args("watch", "-o", "json", "--count", "2", "--poll", "50ms"))
		started := time.Now().Add(-time.Second)

		w.wmPrefill(t, "pr1", 0, 2) // another environment: not printed
		for _, args := range [][]string{
			{"raw.a", "--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T03:00:00Z", "--status", "applied"},
			{"raw.a", "--since", "2026-01-01T01:00:00Z", "--until", "2026-01-01T02:00:00Z", "--status", "pending"},
		} {
			if code, _, errOut := run(t, w.args("mark", args...)...); code != 0 {
				t.Fatalf("mark %v: %s", args, errOut)
			}
		}
		wmWait(t, done, out)

		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		want := []string{
			`{"model":"raw.a","since":"2026-01-01T00:00:00Z","until":"2026-01-01T03:00:00Z","from":"pending","to":"applied","at":"","run_id":null,"count":3}`,
			`{"model":"raw.a","since":"2026-01-01T01:00:00Z","until":"2026-01-01T02:00:00Z","from":"applied","to":"pending","at":"","run_id":null,"count":1}`,
		}
		if len(lines) != len(want) {
			t.Fatalf("want %d NDJSON lines, got:\n%s", len(want), out.String())
		}
		for i, l := range lines {
			var obj map[string]any
			if err := json.Unmarshal([]byte(l), &obj); err != nil {
				t.Fatalf("line %d is not one JSON object: %v\n%s", i, err, l)
			}
			at, err := time.Parse(time.RFC3339, fmt.Sprint(obj["at"]))
			if err != nil || !strings.HasSuffix(fmt.Sprint(obj["at"]), "Z") || at.Before(started) || at.After(time.Now().Add(time.Second)) {
				t.Errorf("line %d: at %v is not the time of the mark (%v)", i, obj["at"], err)
			}
			obj["at"] = ""
			suJSONEqual(t, wmJSON(obj), want[i])
		}
	})
}

func wmJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestWatchTextFiltersModelsAndIsPlainWhenPiped(t *testing.T) {
	w := newSUWorld(t, "sqlite")
	w.wmPrefill(t, "", 0, 6)
	out, done := wmStartWatch(t, w.args("watch", "raw.a", "--count", "1", "--poll", "50ms"))
	if _, err := w.store.Prefill(context.Background(), state.PrefillRequest{Model: "ref.c", Windows: []state.Window{{}}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, w.args("mark", "raw.a", "--since", "2026-01-01T03:00:00Z", "--until", "2026-01-01T04:00:00Z", "--status", "applied")...); code != 0 {
		t.Fatal(errOut)
	}
	wmWait(t, done, out)
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  raw\.a  \[2026-01-01T03:00:00Z, 2026-01-01T04:00:00Z\)  pending → applied  1 unit\n$`)
	if !re.MatchString(out.String()) {
		t.Errorf("text line %q", out.String())
	}
}

func TestWatchFromStart(t *testing.T) {
	w := newSUWorld(t, "sqlite")
	w.wmPrefill(t, "", 0, 6)
	if _, err := w.store.Prefill(context.Background(), state.PrefillRequest{Model: "ref.c", Windows: []state.Window{{}}, Now: suH(1)}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, w.args("watch", "--from-start", "--count", "2", "-o", "json")...)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines:\n%s", out)
	}
	suJSONEqual(t, lines[0], `{"model":"raw.a","since":"2026-01-01T00:00:00Z","until":"2026-01-01T06:00:00Z","from":null,"to":"pending","at":"2026-01-01T00:00:00Z","run_id":null,"count":6}`)
	suJSONEqual(t, lines[1], `{"model":"ref.c","since":null,"until":null,"from":null,"to":"pending","at":"2026-01-01T01:00:00Z","run_id":null,"count":1}`)

	code, out, _ = run(t, w.args("watch", "--from-start", "--count", "2")...)
	want := "2026-01-01T00:00:00Z  raw.a  [2026-01-01T00:00:00Z, 2026-01-01T06:00:00Z)  new → pending  6 units\n" +
		"2026-01-01T01:00:00Z  ref.c  existence row  new → pending  1 unit\n"
	if code != 0 || out != want {
		t.Errorf("text: code %d\n%s", code, out)
	}
	for _, args := range [][]string{{"raw.aa"}, {"--count", "-1"}} {
		code, out, errOut := run(t, w.args("watch", args...)...)
		if code != 2 || out != "" || errOut == "" {
			t.Errorf("%v: code %d out %q err %q", args, code, out, errOut)
		}
	}
}

func TestWatchStopsOnSIGINTAndSIGTERM(t *testing.T) {
	w := newSUWorld(t, "sqlite")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, w.args("watch")...)...)
		cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "following changes") {
					ready <- true
				}
			}
			close(ready)
		}()
		select {
		case ok := <-ready:
			if !ok {
				t.Fatal("watch ended before following")
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("watch did not start")
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err := <-waited:
			if err != nil {
				t.Errorf("%v: watch did not exit 0: %v", sig, err)
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: watch did not stop", sig)
		}
	}
}

func TestMarkChangesExactlyTheWindowAndIsAudited(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		ctx := context.Background()
		w.wmPrefill(t, "", 0, 6)
		if _, err := w.store.SetStatus(ctx, state.StatusChange{Model: "raw.a", Window: suHW(3, 4), From: []state.UnitStatus{state.Pending}, To: state.Failed, Now: suH(0)}); err != nil {
			t.Fatal(err)
		}
		before := time.Now().Add(-time.Second)
		code, out, errOut := run(t, w.args("mark", "raw.a", "--since", "2026-01-01T01:00:00Z", "--until", "2026-01-01T04:00:00Z", "--status", "applied", "-o", "json")...)
		if code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		suJSONEqual(t, out, `{"model":"raw.a","since":"2026-01-01T01:00:00Z","until":"2026-01-01T04:00:00Z","status":"applied","changed":3}`)
		var got []string
		err := w.store.ScanUnits(ctx, state.UnitQuery{Model: "raw.a"}, func(u state.Unit) error {
			s := u.Window.Since.Format("15") + "-" + u.Window.Until.Format("15") + ":" + string(u.Status)
			if u.Status == state.Applied && (u.AppliedAt == nil || u.AppliedAt.Before(before) || u.AppliedAt.After(time.Now())) {
				t.Errorf("%s applied_at %v is not the time of the mark", s, u.AppliedAt)
			}
			got = append(got, s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(got, " "); g != "00-01:pending 01-02:applied 02-03:applied 03-04:applied 04-05:pending 05-06:pending" {
			t.Errorf("units after the mark: %s", g)
		}
		log, err := w.store.AuditLog(ctx, 1)
		if err != nil || len(log) != 1 {
			t.Fatal(log, err)
		}
		if a := log[0]; a.Action != "mark" || a.Actor != "tester" || a.Outcome != "ok: 3 units" || a.Args["model"] != "raw.a" ||
			a.Args["status"] != "applied" || a.Args["window"] != "[2026-01-01T01:00:00Z, 2026-01-01T04:00:00Z)" {
			t.Errorf("audit entry %+v", a)
		}

		// Text; only applied, blocked and failed units move to pending.
		code, out, _ = run(t, w.args("mark", "raw.a", "--since", "2026-01-01", "--until", "2026-01-01T02:00:00Z", "--status", "pending")...)
		if code != 0 || out != "marked 1 unit of raw.a in [2026-01-01T00:00:00Z, 2026-01-01T02:00:00Z) pending (prod)\n" {
			t.Errorf("text: code %d out %q", code, out)
		}
		code, out, _ = run(t, w.args("mark", "raw.a", "--since", "2026-01-01", "--until", "2026-01-01T02:00:00Z", "--status", "pending")...)
		if code != 0 || !strings.HasPrefix(out, "marked 0 units of raw.a") {
			t.Errorf("repeat: code %d out %q", code, out)
		}

		// A timeless model's existence row is marked without a window.
		if _, err := w.store.Prefill(ctx, state.PrefillRequest{Model: "ref.c", Windows: []state.Window{{}}, Now: suH(0)}); err != nil {
			t.Fatal(err)
		}
		code, out, errOut = run(t, w.args("mark", "ref.c", "--status", "applied", "-o", "json")...)
		if code != 0 {
			t.Fatal(errOut)
		}
		suJSONEqual(t, out, `{"model":"ref.c","since":null,"until":null,"status":"applied","changed":1}`)
	})
}

func TestMarkRefusesBadInputAndChangesNothing(t *testing.T) {
	suEach(t, func(t *testing.T, w *suWorld) {
		ctx := context.Background()
		w.wmPrefill(t, "", 0, 6)
		if _, err := w.store.Prefill(ctx, state.PrefillRequest{Model: "ref.c", Windows: []state.Window{{}}, Now: suH(0)}); err != nil {
			t.Fatal(err)
		}
		w.addExtraModel(t)
		before := w.wmSnapshot(t)
		win := []string{"--since", "2026-01-01T01:00:00Z", "--until", "2026-01-01T03:00:00Z"}
		for _, c := range []struct {
			args []string
			want string
		}{
			{append([]string{"raw.a", "--status", "applied", "--read-only"}, win...), "read-only"},
			{[]string{"raw.a", "--status", "applied", "--since", "2026-01-01T00:30:00Z", "--until", "2026-01-01T02:00:00Z"}, "not aligned"},
			{[]string{"raw.a", "--status", "applied", "--since", "2026-01-01T02:00:00Z", "--until", "2026-01-01T01:00:00Z"}, "not before --until"},
			{[]string{"raw.a", "--status", "applied", "--since", "2026-01-01T02:00:00Z", "--until", "2026-01-01T02:00:00Z"}, "not before --until"},
			{[]string{"raw.a", "--status", "applied", "--since", "2026-01-01T02:00:00Z"}, "--until is missing"},
			{[]string{"raw.a", "--status", "applied"}, "give the window"},
			{append([]string{"raw.aa", "--status", "applied"}, win...), "did you mean raw.a"},
			{append([]string{"marts.new", "--status", "applied"}, win...), "not registered"},
			{append([]string{"ref.c", "--status", "applied"}, win...), "timeless"},
			{append([]string{"raw.a", "--status", "failed"}, win...), "applied or pending"},
			{append([]string{"raw.a", "--status", "bogus"}, win...), "applied or pending"},
			{append([]string{"raw.a"}, win...), "--status is required"},
			{[]string{"raw.a", "--status", "applied", "--since", "soon", "--until", "2026-01-01"}, "--since: invalid time"},
		} {
			code, out, errOut := run(t, w.args("mark", c.args...)...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("%v: code %d out %q err %q; want exit 2 and one line naming %q", c.args, code, out, errOut, c.want)
			}
		}
		if after := w.wmSnapshot(t); after != before {
			t.Errorf("refused marks changed units:\nbefore\n%s\nafter\n%s", before, after)
		}
		log, err := w.store.AuditLog(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range log {
			if a.Action == "mark" && !strings.HasPrefix(a.Outcome, "error: ") && a.Outcome != "refused: read-only" {
				t.Errorf("a refused mark was audited as %q", a.Outcome)
			}
		}
	})
}
