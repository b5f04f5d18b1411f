package graphview

import (
	"maps"
	"math"
	"slices"
)

// net is what leaves one item for the layer below with one edge type: a
// stem from the item's bottom down to a track row, the track across, and a
// drop from the track into each target's in-port. Edges of one source and
// type share a net, a tree; a source's nets share its stem.
type net struct {
	owner   int
	typ     ekind
	stem    int   // column
	targets []int // items
	ports   []int // in-port column per target
	lo, hi  int   // the track's extent
	track   int   // row within the channel; -1 for a straight drop
}

// channel is the routing between layer li and li+1.
type channel struct {
	nets   []net
	tracks int
	label  int // rows for the edges' marks (conditional edges' letters)
	rows   int
}

type portRef struct {
	net, target int // index in channel.nets, index in that net's targets
}

// route routes every channel, then sets the layers' rows and turns the
// routes into segments.
func (l *Layout) route() {
	chans := make([]channel, max(len(l.layers)-1, 0))
	inc := make([][]portRef, len(l.items))
	for li := range chans {
		chans[li] = l.routeChannel(li, inc)
	}
	l.layerY = make([]int, len(l.layers))
	l.thick = make([]int, len(l.layers))
	y := 0
	for li, ly := range l.layers {
		l.layerY[li] = y
		l.thick[li] = l.boxRows
		if l.lr {
			l.thick[li] = 1
			for _, it := range ly {
				l.thick[li] = max(l.thick[li], l.items[it].boxW)
			}
		}
		y += l.thick[li]
		if li < len(chans) {
			y += chans[li].rows
		}
	}
	if len(l.layers) > 0 {
		l.height = y
	}
	for li := range l.layers {
		ly := l.layerY[li]
		b := band{y0: ly, y1: ly + l.thick[li], layer: li}
		for _, it := range l.layers[li] {
			if m := &l.items[it]; m.node < 0 {
				b.segs = append(b.segs, seg{m.x, ly, m.x, ly + l.thick[li] - 1, it, m.typ})
			}
		}
		l.bands = append(l.bands, b)
		if li < len(chans) {
			l.bands = append(l.bands, l.channelBand(li, &chans[li]))
		}
	}
	if l.lr { // worked out along and across layers: turned, they are rows and columns
		l.width, l.height = l.height, l.width
	}
}

// routeChannel builds the nets leaving layer li, picks each target's
// in-ports and gives every net that must move sideways a track row.
func (l *Layout) routeChannel(li int, inc [][]portRef) channel {
	var ch channel
	stems := map[int]int{} // column → owner
	total := 0
	for _, u := range l.layers[li] {
		total += len(l.items[u].down)
	}
	// Every net's targets and ports, carved out of two arrays.
	targetArena, portArena := make([]int, total), make([]int, total)
	for _, u := range l.layers[li] {
		m := &l.items[u]
		if len(m.down) == 0 {
			continue
		}
		stems[m.x+m.port] = u
		var types []ekind
		for _, d := range m.down {
			if !slices.Contains(types, d.typ) {
				types = append(types, d.typ)
			}
		}
		slices.SortFunc(types, compareKind)
		for _, typ := range types {
			targets := targetArena[:0]
			for _, d := range m.down {
				if d.typ == typ {
					targets = append(targets, d.item)
				}
			}
			k := len(targets)
			ch.nets = append(ch.nets, net{owner: u, typ: typ, stem: m.x + m.port,
				targets: targets[:k:k], ports: portArena[:k:k]})
			targetArena, portArena = targetArena[k:], portArena[k:]
		}
	}
	for ni := range ch.nets {
		for ti, t := range ch.nets[ni].targets {
			inc[t] = append(inc[t], portRef{ni, ti})
		}
	}
	for _, v := range l.layers[li+1] {
		refs := inc[v]
		if len(refs) == 0 {
			continue
		}
		l.assignPorts(v, refs, ch.nets, stems)
		inc[v] = refs[:0]
	}
	for ni := range ch.nets {
		n := &ch.nets[ni]
		n.lo, n.hi = n.stem, n.stem
		for _, p := range n.ports {
			n.lo, n.hi = min(n.lo, p), max(n.hi, p)
		}
		n.track = -1
		if h := len(l.markText(n.typ).cl); h > ch.label {
			for _, t := range n.targets {
				if l.items[t].node >= 0 {
					ch.label = h
				}
			}
		}
	}
	ch.tracks = assignTracks(ch.nets)
	ch.rows = ch.tracks + ch.label
	if l.lr { // a cell of line between a stem and the marks
		ch.rows++
	}
	ch.rows = max(ch.rows, 1)
	return ch
}

// assignTracks gives every net that moves sideways a track row, first fit
// by left end with a blank cell between nets on one row, and returns how
// many rows it used. A net whose drop lands on the column of another
// source's stem goes below that source's tracks, where the stem has already
// turned, so the two never run on top of each other (unless such demands
// go round in a circle).
func assignTracks(nets []net) int {
	var order []int
	stemNets := map[int][]int{} // stem column → that source's nets with tracks
	for ni := range nets {
		if n := &nets[ni]; n.lo != n.hi {
			order = append(order, ni)
			stemNets[n.stem] = append(stemNets[n.stem], ni)
		}
	}
	if len(order) == 0 {
		return 0
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := nets[a].lo - nets[b].lo; c != 0 {
			return c
		}
		return nets[a].hi - nets[b].hi
	})
	above := make([][]int, len(nets)) // nets whose tracks must be higher
	for _, ni := range order {
		n := &nets[ni]
		for _, p := range n.ports {
			for _, mi := range stemNets[p] {
				if nets[mi].owner != n.owner {
					above[ni] = append(above[ni], mi)
				}
			}
		}
	}
	free := func(ni, t int) bool {
		n := &nets[ni]
		for _, oi := range order {
			if o := &nets[oi]; oi != ni && o.track == t && o.lo <= n.hi+1 && n.lo <= o.hi+1 {
				return false
			}
		}
		return true
	}
	need := func(ni int) int {
		t := 0
		for _, mi := range above[ni] {
			if nets[mi].track >= 0 {
				t = max(t, nets[mi].track+1)
			}
		}
		return t
	}
	place := func(ni, from int) {
		nets[ni].track = -1
		t := from
		for !free(ni, t) {
			t++
		}
		nets[ni].track = t
	}
	for _, ni := range order {
		place(ni, need(ni))
	}
	for range len(order) {
		moved := false
		for _, ni := range order {
			if t := need(ni); nets[ni].track < t {
				place(ni, t)
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	// Close up rows left empty, keeping their order.
	used := map[int]bool{}
	for _, ni := range order {
		used[nets[ni].track] = true
	}
	rows := slices.Sorted(maps.Keys(used))
	for _, ni := range order {
		nets[ni].track, _ = slices.BinarySearch(rows, nets[ni].track)
	}
	return len(rows)
}

// assignPorts picks target v's in-port for each net arriving at it: a
// dummy's is its own column; a box's are distinct columns of its top border,
// in the order of the nets' stems so they do not cross each other, right
// under a stem that already lies over the box (a straight line), otherwise
// spread around the box's centre, and never on another source's stem.
func (l *Layout) assignPorts(v int, refs []portRef, nets []net, stems map[int]int) {
	m := &l.items[v]
	if m.node < 0 {
		for _, r := range refs {
			nets[r.net].ports[r.target] = m.x
		}
		return
	}
	slices.SortStableFunc(refs, func(a, b portRef) int {
		na, nb := &nets[a.net], &nets[b.net]
		if na.stem != nb.stem {
			return na.stem - nb.stem
		}
		return compareKind(na.typ, nb.typ)
	})
	lo, hi := m.x+1, m.x+m.size-2
	cands := make([]int, 0, hi-lo+1)
	for c := lo; c <= hi; c++ {
		cands = append(cands, c)
	}
	centre := float64(m.x + m.port)
	k := len(refs)
	want := make([]float64, k)
	for i, r := range refs {
		s := nets[r.net].stem
		if s > lo && s < hi {
			want[i] = float64(s)
		} else {
			want[i] = centre + 2*(float64(i)-float64(k-1)/2)
		}
	}
	ok := func(i, c int) bool {
		o, taken := stems[c]
		return !taken || o == nets[refs[i].net].owner
	}
	cols := pickPorts(cands, want, ok)
	if cols == nil {
		cols = pickPorts(cands, want, func(int, int) bool { return true })
	}
	if cols == nil { // more nets than columns: share them
		cols = make([]int, k)
		for i := range cols {
			cols[i] = cands[i*len(cands)/k]
		}
	}
	for i, r := range refs {
		nets[r.net].ports[r.target] = cols[i]
		m.arrows = append(m.arrows, arrow{cols[i], nets[r.net].typ})
	}
}

// pickPorts chooses len(want) strictly increasing columns from cands
// (sorted), each allowed by ok, minimising the total distance from want; nil
// when no choice is allowed.
func pickPorts(cands []int, want []float64, ok func(i, c int) bool) []int {
	k, m := len(want), len(cands)
	if k > m {
		return nil
	}
	inf := math.Inf(1)
	cost := make([]float64, k*m)
	from := make([]int, k*m)
	for i := range k {
		best, bestJ := inf, -1
		if i == 0 {
			best = 0
		}
		for j := range m {
			if i > 0 && j > 0 && cost[(i-1)*m+j-1] < best {
				best, bestJ = cost[(i-1)*m+j-1], j-1
			}
			c := inf
			if best < inf && ok(i, cands[j]) {
				c = best + math.Abs(float64(cands[j])-want[i])
			}
			cost[i*m+j], from[i*m+j] = c, bestJ
		}
	}
	bestJ := -1
	for j := range m {
		if c := cost[(k-1)*m+j]; c < inf && (bestJ < 0 || c < cost[(k-1)*m+bestJ]) {
			bestJ = j
		}
	}
	if bestJ < 0 {
		return nil
	}
	cols := make([]int, k)
	for i := k - 1; i >= 0; i-- {
		cols[i] = cands[bestJ]
		bestJ = from[i*m+bestJ]
	}
	return cols
}

// channelBand turns channel li's nets into segments and letters.
func (l *Layout) channelBand(li int, ch *channel) band {
	yb := l.layerY[li] + l.thick[li] - 1 // the sources' bottom border
	yt := l.layerY[li+1]                 // the targets' top border
	b := band{y0: yb, y1: yt + 1, layer: -1}
	if l.lr {
		b.y0 = l.layerY[li] // the stems from narrow boxes start inside the column
	}
	for _, n := range ch.nets {
		// A stem leaves its box's far border: left to right a narrow box's
		// is short of the column's, and the stem runs on to it.
		far := yb
		if o := &l.items[n.owner]; l.lr && o.node >= 0 {
			far = l.layerY[li] + o.boxW - 1
		}
		if n.track < 0 {
			b.segs = append(b.segs, seg{n.stem, far, n.stem, yt, n.owner, n.typ})
		} else {
			yr := yb + 1 + n.track
			b.segs = append(b.segs,
				seg{n.stem, far, n.stem, yr, n.owner, n.typ},
				seg{n.lo, yr, n.hi, yr, n.owner, n.typ})
			for _, p := range n.ports {
				b.segs = append(b.segs, seg{p, yr, p, yt, n.owner, n.typ})
			}
		}
		h := len(l.markText(n.typ).cl)
		if h == 0 {
			continue
		}
		for ti, t := range n.targets {
			if l.items[t].node >= 0 {
				b.marks = append(b.marks, mark{n.ports[ti], yt - h, n.typ})
			}
		}
	}
	return b
}
