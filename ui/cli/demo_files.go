package cli

import (
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
)

// demoFiles are the demo project's spec template and scripts.
//
//go:embed demo/bollhav.yaml demo/scripts/*.sh
var demoFiles embed.FS

// demoClock is the demo's timeline, fixed when the folder is first made
// and read back from the spec on a rerun, so a rerun catches up rather than
// starting over.
type demoClock struct {
	// HourlyStart is six days before the day the demo was first run.
	HourlyStart time.Time
	// MonthlyStart is the first of the month two months earlier.
	MonthlyStart time.Time
	// Outage is the hour the payment provider was down.
	Outage time.Time
}

func newDemoClock(now time.Time) demoClock {
	today := now.UTC().Truncate(24 * time.Hour)
	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	return demoClock{
		HourlyStart:  today.AddDate(0, 0, -6),
		MonthlyStart: first.AddDate(0, -2, 0),
		// 32 hours before midnight: inside the first seeding run's range.
		Outage: today.Add(-32 * time.Hour),
	}
}

// writeDemoProject writes the spec, the scripts and the outage marker into
// dir unless they exist (a rerun keeps them, and with them the timeline and
// any edits). The outage marker is written with a new project only: once
// it is removed the outage is over, and a rerun does not start it again.
func writeDemoProject(dir string, clock demoClock) error {
	_, err := os.Stat(filepath.Join(dir, "bollhav.yaml"))
	fresh := os.IsNotExist(err)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		return err
	}
	sp, err := demoFiles.ReadFile("demo/bollhav.yaml")
	if err != nil {
		return err
	}
	text := strings.NewReplacer(
		"@HOURLY_START@", rfc3339(clock.HourlyStart),
		"@MONTHLY_START@", rfc3339(clock.MonthlyStart),
		"@OUTAGE@", rfc3339(clock.Outage),
	).Replace(string(sp))
	files := map[string]struct {
		body []byte
		mode fs.FileMode
	}{
		"bollhav.yaml":             {[]byte(text), 0o644},
		"scripts/outage":           {[]byte(rfc3339(clock.Outage) + "\n"), 0o644},
		"scripts/load_payments.sh": {mustRead("demo/scripts/load_payments.sh"), 0o755},
		"scripts/alert.sh":         {mustRead("demo/scripts/alert.sh"), 0o755},
	}
	for name, f := range files {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err == nil || name == "scripts/outage" && !fresh {
			continue
		}
		if err := os.WriteFile(path, f.body, f.mode); err != nil {
			return err
		}
	}
	return nil
}

func mustRead(name string) []byte {
	b, err := demoFiles.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot be missing
	}
	return b
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// DemoOutage is when the payment provider's failed hour starts in the demo
// folder dir: the time demo wrote to scripts/outage. A rerun of demo reads
// its timeline back from it, and the tests that run on the demo find the
// failed hour by it.
func DemoOutage(dir string) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(dir, "scripts", "outage"))
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
}

// readDemoClock reads the timeline back from an existing demo folder: the
// outage marker, or, once the outage is over (the marker removed), the
// start of the hourly models in the spec, which the demo's first day
// follows by six days.
func readDemoClock(dir string) (demoClock, bool) {
	if outage, err := DemoOutage(dir); err == nil {
		c := newDemoClock(outage.Add(32 * time.Hour))
		c.Outage = outage
		return c, true
	}
	sp, err := spec.Load(filepath.Join(dir, "bollhav.yaml"))
	if err != nil {
		return demoClock{}, false
	}
	m := sp.Model("raw.orders")
	if m == nil || m.Chunking == nil {
		return demoClock{}, false
	}
	return newDemoClock(m.Chunking.Start.AddDate(0, 0, 6)), true
}

// writeLandingFiles writes the shop's landing data from start up to now:
// an order every 7 minutes and a page view every 2 minutes, the same rows
// for the same instants on every rerun, so a rerun only adds the new ones.
func writeLandingFiles(dir string, start, now time.Time) error {
	if err := os.MkdirAll(filepath.Join(dir, "landing"), 0o755); err != nil {
		return err
	}
	currencies := []string{"SEK", "SEK", "EUR", "NOK"}
	pages := []string{"/", "/search", "/product/42", "/product/7", "/cart", "/checkout"}
	err := writeCSV(filepath.Join(dir, "landing", "orders.csv"), []string{"order_id", "ts", "customer_id", "amount", "currency"},
		start, now, 7*time.Minute, func(i int, ts time.Time) []string {
			amount := float64(40+(i*37)%460) + float64((i*13)%100)/100
			return []string{strconv.FormatInt(ts.Unix(), 10), ts.Format(time.DateTime), strconv.Itoa(1 + (i*17)%60),
				strconv.FormatFloat(amount, 'f', 2, 64), currencies[i%len(currencies)]}
		})
	if err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "landing", "clicks.csv"), []string{"ts", "session_id", "page"},
		start, now, 2*time.Minute, func(i int, ts time.Time) []string {
			return []string{ts.Format(time.DateTime), "s" + strconv.Itoa(i/5), pages[(i*7)%len(pages)]}
		})
}

// writeCSV writes one row per step in [start, now) to a temporary file and
// renames it into place, so a loader never reads half a file.
func writeCSV(path string, header []string, start, now time.Time, step time.Duration, row func(int, time.Time) []string) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	w := csv.NewWriter(f)
	_ = w.Write(header)
	i := 0
	for ts := start; ts.Before(now); ts = ts.Add(step) {
		_ = w.Write(row(i, ts))
		i++
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}
