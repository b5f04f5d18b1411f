package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// retrySpec is a one-model spec: defaults: retry: on line 2, the model's
// retry on line 6, its value from column 12.
func retrySpec(defaults, retry string) []byte {
	return yamlLines(
		"defaults:",
		"  retry: "+defaults,
		"models:",
		"  - name: raw.payments",
		"    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}",
		"    retry: "+retry,
		"    run: {command: [\"true\"]}",
	)
}

func loadRetry(t *testing.T, src []byte) Retry {
	t.Helper()
	sp, err := Parse("bollhav.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Models[0].Retry
}

// TestRetryPolicyFieldByField: a model's retry block overrides defaults:
// field by field, and defaults: fill what it leaves out.
func TestRetryPolicyFieldByField(t *testing.T) {
	r := loadRetry(t, retrySpec("{attempts: 3, delay: 30s, max_delay: 10m}", "{attempts: 5, delay: 1m}"))
	if r.Attempts != 5 || r.Delay != time.Minute || r.MaxDelay != 10*time.Minute {
		t.Errorf("policy %+v, want attempts 5 (own), delay 1m (own), max_delay 10m (defaults)", r)
	}
	if r.Pos.Line != 6 {
		t.Errorf("policy position %v, want the model's retry on line 6", r.Pos)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	t.Run("no retry anywhere is one attempt", func(t *testing.T) {
		sp, err := Parse("bollhav.yaml", yamlLines("models:", "  - name: a.b", "    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}"))
		if err != nil {
			t.Fatal(err)
		}
		if r := sp.Models[0].Retry; r.Attempts != 1 || r.Retries() {
			t.Errorf("policy %+v, want one attempt", r)
		}
	})
	t.Run("defaults alone apply to every model", func(t *testing.T) {
		sp, err := Parse("bollhav.yaml", yamlLines("defaults: {retry: {attempts: 3}}", "models:",
			"  - name: a.b", "    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}",
			"  - name: a.c", "    temporality: timeless"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sp.Models {
			if m.Retry.Attempts != 3 || m.Retry.Delay != DefaultRetryDelay || m.Retry.MaxDelay != DefaultRetryMaxDelay {
				t.Errorf("%s: policy %+v, want attempts 3 with the default delays", m.Name, m.Retry)
			}
		}
	})
	t.Run("a delay past the default cap raises the cap to it", func(t *testing.T) {
		r := loadRetry(t, retrySpec("{attempts: 2}", "{delay: 1h}"))
		if r.Delay != time.Hour || r.MaxDelay != time.Hour {
			t.Errorf("policy %+v, want delay and max_delay 1h", r)
		}
	})
}

// TestRetryBadInput: each mistake is one error at the value's line and
// column that names the field.
func TestRetryBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, retry, at, msg string
	}{
		{"attempts zero", "{attempts: 0}", "6:23", "model raw.payments: attempts must be at least 1, got 0"},
		{"attempts not a number", "{attempts: three}", "6:23", `model raw.payments: attempts must be a whole number, got "three"`},
		{"attempts a fraction", "{attempts: 2.5}", "6:23", `model raw.payments: attempts must be a whole number, got "2.5"`},
		{"negative delay", "{attempts: 2, delay: -1m}", "6:33", `model raw.payments: retry delay: invalid duration "-1m"`},
		{"max_delay shorter than delay", "{attempts: 2, delay: 5m, max_delay: 1m}", "6:48", "model raw.payments: retry max_delay 1m0s is shorter than delay 5m0s"},
		{"unknown key", "{attempts: 2, dealy: 5m}", "6:26", `model raw.payments: unknown key "dealy" in retry (did you mean "delay"?)`},
		{"not a mapping", "3", "6:12", "model raw.payments: retry must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOneError(t, retrySpec("{attempts: 1}", tc.retry), tc.at, tc.msg)
		})
	}
	t.Run("max_delay from defaults shorter than the model's delay", func(t *testing.T) {
		wantOneError(t, retrySpec("{attempts: 2, max_delay: 1m}", "{delay: 5m}"), "6:5",
			"model raw.payments: retry max_delay 1m0s is shorter than delay 5m0s (one of them from defaults:)")
	})
	t.Run("an unknown key in defaults", func(t *testing.T) {
		wantOneError(t, yamlLines("defaults: {retries: {attempts: 2}}", "models: []"), "1:12", `unknown key "retries" in defaults`)
	})
}

// TestRetryBackoff: the wait doubles from delay per failed attempt, stops at
// max_delay, and jitter keeps it within [half, all] of that.
func TestRetryBackoff(t *testing.T) {
	r := Retry{Attempts: 5, Delay: 30 * time.Second, MaxDelay: 10 * time.Minute}
	for _, tc := range []struct {
		failed   int
		jitter   float64
		want     time.Duration
		whatEdge string
	}{
		{1, 0, 15 * time.Second, "first failure, least jitter: half of delay"},
		{1, 1, 30 * time.Second, "first failure, most jitter: delay"},
		{2, 1, time.Minute, "second failure: doubled"},
		{3, 0.5, 90 * time.Second, "third failure: 2m scaled by 0.75"},
		{6, 1, 10 * time.Minute, "sixth failure: 16m capped at max_delay"},
		{60, 1, 10 * time.Minute, "far past the cap: no overflow"},
	} {
		if got := r.Backoff(tc.failed, tc.jitter); got != tc.want {
			t.Errorf("%s: Backoff(%d, %v) = %s, want %s", tc.whatEdge, tc.failed, tc.jitter, got, tc.want)
		}
	}
}

// TestRetryPolicySurvivesRegistration: a worker that runs from the store's
// registration alone must honour the same budget as a run with the spec.
func TestRetryPolicySurvivesRegistration(t *testing.T) {
	sp, err := Parse("bollhav.yaml", retrySpec("{attempts: 3, max_delay: 30m}", "{attempts: 5, delay: 1m}"))
	if err != nil {
		t.Fatal(err)
	}
	m := sp.Models[0]
	def := DefinitionOf(m)
	if def.Retry == nil || def.Retry.Attempts != 5 || def.Retry.Delay != "1m0s" || def.Retry.MaxDelay != "30m0s" {
		t.Fatalf("stored policy %+v", def.Retry)
	}
	rec := state.ModelRecord{Name: m.Name, Pipeline: m.Pipeline, Temporality: "temporal", Interval: "1h",
		Flexibility: "fix", Start: m.Chunking.Start, Definition: def.JSON()}
	back, err := ModelFromRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if back.Retry.Attempts != 5 || back.Retry.Delay != time.Minute || back.Retry.MaxDelay != 30*time.Minute {
		t.Errorf("policy read back %+v", back.Retry)
	}
	// The default policy stores nothing, so a spec without retries keeps
	// the content hash it had before retries existed.
	plain, err := Parse("bollhav.yaml", yamlLines("models:", "  - name: a.b", "    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if js := string(DefinitionOf(plain.Models[0]).JSON()); strings.Contains(js, "retry") {
		t.Errorf("a model without retries stores %s", js)
	}
}
