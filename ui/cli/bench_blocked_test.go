package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// blockedBackends are the stores BenchmarkBlockedCLI measures.
var blockedBackends = []string{"sqlite", "postgres"}

// BenchmarkBlockedCLI is issue 33's `bollhav blocked` row, the command
// run as an operator runs it: a process of its own (TestMain's
// BOLLHAV_CLI_MAIN) over gen.BenchConfig's project, on each store.
//
// Each time is the median of benchRepeats runs, each peak the largest.
//
//   - first-line-s: exec to the first line out, the table's header, which
//     is printed with the first page, ranked;
//   - all-s: exec to the end of the listing;
//   - peak-MB: the child's own peak RSS, GNU time's maximum resident set;
//   - full-read-s: Engine.Blocked's whole read, in this process, for
//     reference: what the command did before it paged;
//   - incidents-s, incidents-peak-MB: `bollhav incidents`, exec to its
//     end (the report is printed whole), and its peak RSS;
//   - refresh-s, refresh-heap-MB: `serve --metrics`' full refresh of its
//     snapshot, in this process (metricsRefresh).
func BenchmarkBlockedCLI(b *testing.B) {
	cfg := gen.BenchConfig(gen.BenchUnits())
	for _, backend := range blockedBackends {
		b.Run("store="+backend+"/units="+gen.SizeName(cfg.Units), func(b *testing.B) {
			dir := b.TempDir()
			specPath := filepath.Join(dir, gen.SpecFile)
			if err := os.WriteFile(specPath, gen.Spec(cfg), 0o644); err != nil {
				b.Fatal(err)
			}
			dsn, schema, e := blockedFixture(b, backend, dir, cfg)
			start := time.Now()
			all, err := e.Blocked(b.Context(), gate.BlockedFilter{})
			if err != nil {
				b.Fatal(err)
			}
			full := time.Since(start)
			b.Logf("%d blocked units; the full read took %s", len(all), full.Round(time.Millisecond))
			// Each figure is the median of benchRepeats runs, the peaks
			// the largest: one run of a command swings by a few tenths of
			// a second at 10M units.
			var first, whole, incWhole, refresh []time.Duration
			var peak, incPeak, refreshHeap float64
			for b.Loop() {
				for range benchRepeats {
					f, w, p, err := blockedOnce(specPath, dsn, schema, len(all))
					if err != nil {
						b.Fatal(err)
					}
					first, whole, peak = append(first, f), append(whole, w), max(peak, p)
				}
			}
			// `bollhav incidents`, the whole report, after it: the same
			// store, its pages warm as the operator's second command
			// finds them.
			for range benchRepeats {
				_, w, p, _, err := cliOnce(specPath, dsn, schema, "incidents")
				if err != nil {
					b.Fatal(err)
				}
				incWhole, incPeak = append(incWhole, w), max(incPeak, p)
			}
			for range benchRepeats {
				took, heap, err := metricsRefresh(b.Context(), e)
				if err != nil {
					b.Fatal(err)
				}
				refresh, refreshHeap = append(refresh, took), max(refreshHeap, heap)
			}
			b.ReportMetric(median(incWhole).Seconds(), "incidents-s")
			b.ReportMetric(incPeak, "incidents-peak-MB")
			b.ReportMetric(median(refresh).Seconds(), "refresh-s")
			b.ReportMetric(refreshHeap, "refresh-heap-MB")
			b.ReportMetric(median(first).Seconds(), "first-line-s")
			b.ReportMetric(median(whole).Seconds(), "all-s")
			b.ReportMetric(peak, "peak-MB")
			b.ReportMetric(full.Seconds(), "full-read-s")
			b.ReportMetric(float64(len(all)), "blocked-units")
		})
	}
}

// benchRepeats is how many times BenchmarkBlockedCLI runs each command.
const benchRepeats = 3

// median is the middle of ds (the upper middle of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// blockedOnce runs `bollhav blocked` as a process of its own and returns
// the time to its first line, to its end, and its peak RSS in MB; the
// listing must count want units.
func blockedOnce(specPath, dsn, schema string, want int) (first, whole time.Duration, peakMB float64, err error) {
	first, whole, peakMB, last, err := cliOnce(specPath, dsn, schema, "blocked")
	if err != nil {
		return 0, 0, 0, err
	}
	if wantLast := fmt.Sprintf("%d blocked unit%s\n", want, plural(want)); last != wantLast {
		return 0, 0, 0, fmt.Errorf("the listing ends %q, want %q", last, wantLast)
	}
	return first, whole, peakMB, nil
}

// cliOnce runs `bollhav COMMAND --spec … --dsn … --as-of …` as a process
// of its own and returns the time to its first line, to its end, its peak
// RSS in MB and its last line.
func cliOnce(specPath, dsn, schema, command string) (first, whole time.Duration, peakMB float64, last string, err error) {
	// GNU time, not this process's wait4: a child forked from a large
	// process and exec'd carries the parent's peak in its ru_maxrss.
	peakFile := filepath.Join(filepath.Dir(specPath), "time.out")
	cmd := exec.Command("/usr/bin/time", "-f", "%M", "-o", peakFile, os.Args[0], "-test.run=^$", "--", command,
		"--spec", specPath, "--dsn", dsn, "--as-of", state.FormatTime(gen.AsOf))
	cmd.Env = append(os.Environ(), "BOLLHAV_CLI_MAIN=1", "BOLLHAV_PG_SCHEMA="+schema)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, "", err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, "", err
	}
	r := bufio.NewReader(out)
	for n := 0; ; n++ {
		line, err := r.ReadString('\n')
		if n == 0 {
			first = time.Since(start)
		}
		if line != "" {
			last = line
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		return 0, 0, 0, "", fmt.Errorf("bollhav %s: %w", command, err)
	}
	whole = time.Since(start)
	raw, err := os.ReadFile(peakFile)
	if err != nil {
		return 0, 0, 0, "", err
	}
	kb, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, 0, 0, "", fmt.Errorf("GNU time's peak: %w", err)
	}
	return first, whole, float64(kb) / 1024, last, nil
}
