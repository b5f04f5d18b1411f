package metrics_test

import (
	"fmt"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/metrics"
)

// On generated projects (gen.Populate: every contract level and grain,
// failed, retrying, blocked, stale and missing units drawn at random), on
// both stores, the gauges name the incidents `bollhav incidents` reports,
// with what each holds and releases, and the held units counted once: the
// metrics never compute a count of their own.
func TestHoldsGaugesAreTheIncidentsOnGeneratedProjects(t *testing.T) {
	seeds := []int64{1, 2, 3}
	if testing.Short() || enginetest.UnderRace {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			enginetest.Each(t, func(t *testing.T, s state.Store) {
				e, _, err := gen.Populate(t.Context(), s, engine.Options{Actor: "test"}, gen.Config{Models: 30, Units: 1500, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				fams := scrape(t, newMonitor(t, metrics.Config{Engine: e}).Handler())
				rep, err := e.Incidents(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if rep.Held == 0 {
					t.Fatal("nothing is held in the generated project: the test compares nothing")
				}
				if got := value(fams, "bollhav_held_units", nil); got != float64(rep.Held+rep.Untraced) {
					t.Errorf("bollhav_held_units = %v; incidents: held %d + untraced %d", got, rep.Held, rep.Untraced)
				}
				byKind := map[gate.IncidentKind]float64{}
				for _, inc := range rep.Incidents {
					byKind[inc.Kind]++
					l := lbl("kind", string(inc.Kind), "model", inc.Model, "pipeline", inc.Pipeline)
					if got := value(fams, "bollhav_incident_holds_units", l); got != float64(inc.Blocked) {
						t.Errorf("holds of %s %s = %v; the incident holds %d", inc.Kind, inc.Model, got, inc.Blocked)
					}
					if got := value(fams, "bollhav_incident_releases_units", l); got != float64(inc.Releases) {
						t.Errorf("releases of %s %s = %v; the incident releases %d", inc.Kind, inc.Model, got, inc.Releases)
					}
				}
				if n := len(fams["bollhav_incident_holds_units"].GetMetric()); n != len(rep.Incidents) {
					t.Errorf("%d holds samples for %d incidents", n, len(rep.Incidents))
				}
				for _, k := range gate.IncidentKinds {
					if got := value(fams, "bollhav_open_incidents", lbl("kind", string(k))); got != byKind[k] {
						t.Errorf("bollhav_open_incidents{kind=%s} = %v; incidents lists %v", k, got, byKind[k])
					}
				}
			})
		})
	}
}
