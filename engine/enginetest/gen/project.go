package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// pipelineSize is about how many models a generated pipeline holds.
const pipelineSize = 20

// project is the generated layout: the models in dependency order (every
// upstream comes before its downstreams) with their shapes and edges.
type project struct {
	cfg    Config
	models []*modelDef
}

// modelDef is one generated model.
type modelDef struct {
	idx            int
	name, pipeline string
	layer          string
	timeless       bool
	flex           bool
	grain          string // "1h"; empty when timeless
	iv             state.Interval
	tz             string // "" is UTC
	loc            *time.Location
	start          time.Time
	end            *time.Time // chunking end; nil for most
	// rangeEnd is the until of the contract range at AsOf.
	rangeEnd time.Time
	// chunks is the number of grid windows (chunks) in [start, rangeEnd).
	chunks int
	// target is the number of units planned.
	target int
	ups    []edgeDef
	// ungated is the name of an ungated source, "" for none.
	ungated     string
	ungatedKind string // "api" or "file"
}

// edgeDef is one gated upstream of a model.
type edgeDef struct {
	up    int
	level spec.ContractLevel
	fresh *freshDef
	// devSkip sets deactivate_for_dev (inert in prod).
	devSkip bool
}

type freshDef struct {
	within string
	d      time.Duration
	all    bool
}

// stockholm is the one non-UTC calendar of the generated project: days at
// DST changes last 23 or 25 hours and windows do not line up with UTC ones.
var stockholm = mustLocation("Europe/Stockholm")

func mustLocation(name string) *time.Location {
	loc, err := state.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// grainWeight is how many units a model of a grain gets relative to a daily
// one: finer grains keep more windows of a shorter history.
var grainWeight = map[string]float64{"15m": 4, "1h": 2.5, "1d": 1, "1w": 0.4, "1mo": 0.25}

// layers and the grains each draws from, with their odds.
var layerGrains = map[string][]weighted{
	"raw":  {{"15m", 40}, {"1h", 50}, {"1d", 10}},
	"stg":  {{"15m", 15}, {"1h", 45}, {"1d", 40}},
	"core": {{"1h", 30}, {"1d", 55}, {"1w", 5}, {"1mo", 10}},
	"mart": {{"1d", 60}, {"1w", 10}, {"1mo", 30}},
}

type weighted struct {
	v string
	w int
}

func pick(r *rand.Rand, opts []weighted) string {
	total := 0
	for _, o := range opts {
		total += o.w
	}
	n := r.IntN(total)
	for _, o := range opts {
		if n < o.w {
			return o.v
		}
		n -= o.w
	}
	return opts[len(opts)-1].v
}

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// layout builds the project of cfg. It draws from its own random stream, so
// the spec does not depend on how the state is generated.
func layout(cfg Config) *project {
	n := max(cfg.Models, 1)
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6c61796f7574)) // "layout"
	p := &project{cfg: cfg}
	pipes := max(1, (n+pipelineSize-1)/pipelineSize)
	// Model i is in pipeline i*pipes/n: contiguous blocks of equal size.
	firstOf, sizeOf := map[int]int{}, map[int]int{}
	for i := n - 1; i >= 0; i-- {
		firstOf[i*pipes/n] = i
		sizeOf[i*pipes/n]++
	}
	for i := range n {
		pipe := i * pipes / n
		first := firstOf[pipe]
		pos := float64(i-first) / float64(sizeOf[pipe])
		layer := "mart"
		switch {
		case pos < 0.25:
			layer = "raw"
		case pos < 0.5:
			layer = "stg"
		case pos < 0.8:
			layer = "core"
		}
		m := &modelDef{idx: i, layer: layer, pipeline: fmt.Sprintf("p%03d", pipe), loc: time.UTC}
		m.name = fmt.Sprintf("p%03d_%s.m%04d", pipe, layer, i)
		if i != first && chance(r, 0.03) {
			m.timeless = true
		} else {
			m.grain = pick(r, layerGrains[layer])
			m.iv = state.MustInterval(m.grain)
			switch {
			case (layer == "raw" || layer == "stg") && m.grain != "1w" && m.grain != "1mo":
				m.flex = chance(r, 0.3)
			case layer == "core" && (m.grain == "1h" || m.grain == "1d"):
				m.flex = chance(r, 0.1)
			}
			if m.iv.Calendar() && chance(r, 0.2) {
				m.tz, m.loc = "Europe/Stockholm", stockholm
			}
		}
		p.models = append(p.models, m)
	}
	p.sizeModels(r)
	for _, m := range p.models {
		p.chooseUpstreams(r, m)
	}
	return p
}

// sizeModels shares the unit budget out by grain and places each temporal
// model's start so that its contract range at AsOf holds its share.
func (p *project) sizeModels(r *rand.Rand) {
	timeless := 0
	weights := make([]float64, len(p.models))
	sum := 0.0
	for i, m := range p.models {
		if m.timeless {
			timeless++
			continue
		}
		weights[i] = grainWeight[m.grain] * (0.5 + r.Float64())
		sum += weights[i]
	}
	budget := float64(max(p.cfg.Units-timeless, 0))
	for i, m := range p.models {
		if m.timeless {
			m.target = 1
			continue
		}
		m.target = max(1, int(math.Round(budget*weights[i]/sum)))
		// A flexible model's units are one to three chunks long (1.4 on
		// average), so it needs more chunks than units.
		m.chunks = m.target
		if m.flex {
			m.chunks = max(1, int(math.Round(float64(m.target)*1.4)))
		}
		end := lastBoundary(m)
		if !m.flex && chance(r, 0.04) {
			// A model retired some windows ago: its chunking has an end.
			back := max(1, m.target/10)
			e := m.iv.AddTo(end, m.loc, -back)
			m.end = &e
			end = e
		}
		m.rangeEnd = end
		m.start = m.iv.AddTo(end, m.loc, -m.chunks)
	}
}

// lastBoundary is the last window boundary at or before AsOf of a grid
// anchored at local midnight (and on the 1st for months): the until of the
// contract range of a model sized back from it.
func lastBoundary(m *modelDef) time.Time {
	if !m.iv.Calendar() {
		return AsOf
	}
	local := AsOf.In(m.loc)
	day := local.Day()
	if m.iv.Unit == state.Month {
		day = 1
	}
	return time.Date(local.Year(), local.Month(), day, 0, 0, 0, 0, m.loc).UTC()
}

// chooseUpstreams gives m its gated upstreams (none for a root) and perhaps
// an ungated source.
func (p *project) chooseUpstreams(r *rand.Rand, m *modelDef) {
	samePipe := []int{}
	earlier := []int{}
	for j := 0; j < m.idx; j++ {
		if p.models[j].pipeline == m.pipeline {
			samePipe = append(samePipe, j)
		} else {
			earlier = append(earlier, j)
		}
	}
	root := len(samePipe)+len(earlier) == 0 || (m.layer == "raw" && (len(samePipe) == 0 || chance(r, 0.6)))
	if root || chance(r, 0.1) {
		if chance(r, 0.5) {
			m.ungated, m.ungatedKind = fmt.Sprintf("vendor.feed_%04d", m.idx), "api"
		} else {
			m.ungated, m.ungatedKind = fmt.Sprintf("landing.drop_%04d", m.idx), "file"
		}
	}
	if root {
		return
	}
	k := 1
	switch x := r.IntN(100); {
	case x >= 80:
		k = 3
	case x >= 45:
		k = 2
	}
	chosen := map[int]bool{}
	for range k {
		up := -1
		// Prefer an upstream whose history reaches back as far as m's: a
		// downstream that starts before its upstream waits forever for
		// windows that will never be loaded, which production has, but
		// rarely.
		for try := 0; try < 8; try++ {
			var c int
			if len(samePipe) > 0 && (len(earlier) == 0 || chance(r, 0.75)) {
				c = samePipe[r.IntN(len(samePipe))]
			} else {
				c = earlier[r.IntN(len(earlier))]
			}
			if chosen[c] {
				continue
			}
			up = c
			u := p.models[c]
			if m.timeless || u.timeless || !u.start.After(m.start) {
				break
			}
		}
		if up < 0 {
			continue
		}
		chosen[up] = true
		m.ups = append(m.ups, p.edge(r, m, p.models[up]))
	}
}

// edge picks the contract level (and freshness) of a gated edge from u to m
// among the levels that can hold: never EXACT on a flexible upstream or a
// window level on or from a timeless model (those are hard errors, which
// production does not keep around), and EXACT only between grids that cut
// the same windows.
func (p *project) edge(r *rand.Rand, m, u *modelDef) edgeDef {
	var opts []weighted
	switch {
	case m.timeless || u.timeless:
		opts = []weighted{{"WHOLE", 65}, {"EXISTS", 35}}
	case u.flex:
		opts = []weighted{{"ENCAPSULATE", 60}, {"THROUGH", 15}, {"WHOLE", 5}, {"EXISTS", 20}}
	case u.grain == m.grain && u.tz == m.tz:
		opts = []weighted{{"EXACT", 35}, {"ENCAPSULATE", 35}, {"THROUGH", 12}, {"WHOLE", 3}, {"EXISTS", 15}}
	default:
		opts = []weighted{{"ENCAPSULATE", 60}, {"THROUGH", 17}, {"WHOLE", 5}, {"EXISTS", 18}}
	}
	e := edgeDef{up: u.idx}
	name := pick(r, opts)
	for c := spec.Exists; c <= spec.Whole; c++ {
		if c.String() == name {
			e.level = c
		}
	}
	if e.level == spec.Exists {
		e.devSkip = chance(r, 0.2)
		return e
	}
	p2 := 0.06
	if e.level == spec.Whole || e.level == spec.Through {
		p2 = 0.3
	}
	if chance(r, p2) {
		e.fresh = &[]freshDef{
			{within: "6h", d: 6 * time.Hour},
			{within: "1d", d: 24 * time.Hour},
			{within: "3d", d: 72 * time.Hour},
			{within: "30d", d: 30 * 24 * time.Hour},
		}[r.IntN(4)]
		e.fresh.all = chance(r, 0.25)
	}
	return e
}
