package graphview

import (
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/graph"
)

// boxH is a node box's height: top border (where arrows land), the content
// row (marker, glyph, label, detail) and the bottom border (where the stem
// leaves).
const boxH = 3

const (
	defaultMaxLabel  = 20
	defaultMaxDetail = 12
	// sweeps is how many barycenter passes (alternating down and up) the
	// crossing reduction tries; the best ordering seen is kept.
	sweeps = 8
	// alignPasses is how many down-and-up pairs the x placement runs.
	alignPasses = 4
)

// Layout is a pipeline graph laid out once: layers (its waves) top to
// bottom, nodes ordered within a layer to cut crossings, positions, and
// every edge's orthogonal route. It is immutable after NewLayout, so its
// methods are safe for concurrent use, and Render only draws the visible
// window.
type Layout struct {
	nodes  []nodeInfo
	byID   map[int]int // task id → index in nodes (and items)
	items  []item      // nodes first (same index), then dummies
	layers [][]int     // item indices per layer, left to right
	layerY []int       // top row of each layer's band (its left column, left to right)
	// thick is each layer's thickness across: boxRows top to bottom, its
	// widest box left to right.
	thick []int
	// lr lays the layers out left to right: the layout is worked out in
	// the same coordinates (x along a layer, y across layers) and turned
	// when it is drawn (real).
	lr     bool
	bands  []band // top to bottom
	width  int
	height int
	strs   map[string]uint32 // label clusters not in the base table
	extra  []string
	marks  []text // the edges' marks (Edge.Mark), by ekind.mark
	// startCrossings are the crossings in the order given, before the
	// sweeps: what a test compares Crossings with.
	startCrossings int
	// boxRows is a box's height: boxH, or one more when a node has a Sub
	// line.
	boxRows int
}

// nodeInfo is a node with its measured texts.
type nodeInfo struct {
	Node
	label, detail text
	sub           text // Node.Sub, measured
	stub          text // first cross-pipeline label, "" when none
	stubMore      text // " +N" when there are more
	stubType      graph.DependencyType
}

// item is a slot in a layer: a node's box, or a dummy that carries a long
// edge through a layer as a vertical line.
type item struct {
	node  int // index in nodes; -1 for a dummy
	layer int
	x     int // left column of the footprint
	w     int // footprint width: the box plus its cross stub
	boxW  int
	// size is the box's extent along its layer: its width top to bottom,
	// its height (rows) left to right; 1 for a dummy.
	size int
	port int   // the stem's column, as an offset from x
	typ  ekind // a dummy's edge kind
	up   []link
	down []link
	// arrows are the in-ports on a box's top border.
	arrows []arrow
}

type link struct {
	item int
	typ  ekind
}

type arrow struct {
	x   int
	typ ekind
}

// band is a horizontal strip of the picture: a layer (boxes and dummies'
// lines) or the channel below one (edge routes). y1 is exclusive.
type band struct {
	y0, y1 int
	layer  int // the layer drawn, or -1 for a channel
	segs   []seg
	marks  []mark
}

// seg is one straight run of an edge's route, both ends inclusive: vertical
// when x0 == x1, horizontal when y0 == y1. owner is the item the route
// leaves from: crossing runs of different owners are drawn as crossings,
// meeting runs of one owner as junctions.
type seg struct {
	x0, y0, x1, y1 int
	owner          int
	typ            ekind
}

// mark is an edge's mark (a conditional edge's letter, or Edge.Mark) just
// above its arrow head, from row y down.
type mark struct {
	x, y int
	typ  ekind
}

// text is a measured string, split into cells: each cluster is drawn in
// w cells (1 or 2).
type text struct {
	cl []cluster
	w  int
}

type cluster struct {
	s uint32 // index in the layout's string table
	w int
}

// strtab interns the strings cells show, so a render's cells hold indices
// and no pointers: the static characters of both drawing modes in a shared
// base table, and a layout's label clusters in its own.
type strtab struct {
	strs []string
	idx  map[string]uint32
}

var base = func() *strtab {
	t := &strtab{strs: []string{""}, idx: map[string]uint32{"": 0}}
	for _, c := range []*chars{&unicodeChars, &asciiChars} {
		for _, b := range []boxChars{c.box, c.selBox} {
			for _, s := range []string{b.tl, b.tr, b.bl, b.br, b.h, b.v, b.stem, b.stemR} {
				t.add(s)
			}
		}
		for _, s := range []string{c.v, c.h, c.vCond, c.hCond, c.arrow, c.arrowR, c.marker, c.stubArrow} {
			t.add(s)
		}
	}
	for h := range numHealth {
		t.add(h.Glyph(false))
		t.add(h.Glyph(true))
	}
	for _, s := range []string{" ", "…", "f", "a", "d"} {
		t.add(s)
	}
	for r := rune(0x20); r < 0x7f; r++ {
		asciiIdx[r] = t.add(string(r))
	}
	return t
}()

// asciiIdx is each printable ASCII character's index in the base table.
var asciiIdx [0x80]uint32

func (t *strtab) add(s string) uint32 {
	if i, ok := t.idx[s]; ok {
		return i
	}
	t.idx[s] = uint32(len(t.strs))
	t.strs = append(t.strs, s)
	return t.idx[s]
}

// sid is a static string's index in the base table.
func sid(s string) uint32 { return base.idx[s] }

// intern returns s's index: in the base table, or else in the layout's own,
// numbered after the base.
func (l *Layout) intern(s string) uint32 {
	if i, ok := base.idx[s]; ok {
		return i
	}
	if i, ok := l.strs[s]; ok {
		return i
	}
	i := uint32(len(base.strs) + len(l.extra))
	l.strs[s] = i
	l.extra = append(l.extra, s)
	return i
}

// str is the string of index i.
func (l *Layout) str(i uint32) string {
	if int(i) < len(base.strs) {
		return base.strs[i]
	}
	return l.extra[int(i)-len(base.strs)]
}

// makeText measures s, with control characters read as spaces, and cuts it
// to max cells with a trailing "…" when it is wider.
func (l *Layout) makeText(s string, max int) text {
	var t text
	var last string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		str := s[i : i+n]
		i += n
		var w int
		switch {
		case r < 0x80 && r >= 0x20 && r != 0x7f:
			last = str
			t.cl = append(t.cl, cluster{asciiIdx[r], 1})
			t.w++
			continue
		case r == utf8.RuneError && n == 1, unicode.IsControl(r):
			str, w = " ", 1
		default:
			w = min(lipgloss.Width(str), 2)
		}
		if w == 0 {
			if len(t.cl) > 0 { // a combining mark joins the cell before it
				last += str
				t.cl[len(t.cl)-1].s = l.intern(last)
			}
			continue
		}
		last = str
		t.cl = append(t.cl, cluster{l.intern(str), w})
		t.w += w
	}
	if t.w <= max {
		return t
	}
	if max <= 0 {
		return text{}
	}
	w, keep := 0, 0
	for keep < len(t.cl) && w+t.cl[keep].w <= max-1 {
		w += t.cl[keep].w
		keep++
	}
	t.cl = append(t.cl[:keep:keep], cluster{sid("…"), 1})
	t.w = w + 1
	return t
}

// NewLayout lays out a pipeline's task graph with default Options. waves
// are the layers, top to bottom (graph.DependencyGraph.Waves); nil computes
// them from edges. See NewLayoutWith.
func NewLayout(nodes []Node, edges []Edge, waves [][]int) *Layout {
	return NewLayoutWith(nodes, edges, waves, Options{})
}

// NewLayoutWith lays out a pipeline's task graph: each wave is a row of
// boxes, ordered to reduce crossings (barycenter sweeps), placed so edges
// run as straight as they can, and every edge routed orthogonally through
// the channel between rows; an edge that spans several waves runs as a
// vertical line through the rows between.
//
// Nodes are kept in the order given, a repeated id once. A node missing from
// waves goes in a row of its own at the bottom; empty waves are dropped. An
// edge naming an unknown node, or one that does not run down to a later
// wave, is not drawn; a repeated edge is drawn once.
func NewLayoutWith(nodes []Node, edges []Edge, waves [][]int, opt Options) *Layout {
	if opt.MaxLabel <= 0 {
		opt.MaxLabel = defaultMaxLabel
	}
	if opt.MaxDetail <= 0 {
		opt.MaxDetail = defaultMaxDetail
	}
	l := &Layout{byID: make(map[int]int, len(nodes)), strs: map[string]uint32{}, boxRows: boxH, lr: opt.LeftToRight}
	for _, n := range nodes {
		if _, dup := l.byID[n.ID]; dup {
			continue
		}
		l.byID[n.ID] = len(l.nodes)
		l.nodes = append(l.nodes, l.measure(n, opt))
		if n.Sub != "" {
			l.boxRows = boxH + 1
		}
	}
	layerOf, initial := l.assignLayers(edges, waves)
	l.buildItems(edges, layerOf, initial)
	l.order(opt.Roots)
	l.place()
	l.route()
	return l
}

func (l *Layout) measure(n Node, opt Options) nodeInfo {
	info := nodeInfo{Node: n, label: l.makeText(n.Label, opt.MaxLabel), detail: l.makeText(n.Detail, opt.MaxDetail),
		sub: l.makeText(n.Sub, opt.MaxLabel+opt.MaxDetail)}
	if len(n.Cross) > 0 {
		info.stub = l.makeText(n.Cross[0].Label, opt.MaxLabel)
		info.stubType = n.Cross[0].Type
		if len(n.Cross) > 1 {
			info.stubMore = l.makeText(" +"+itoa(len(n.Cross)-1), 8)
		}
	}
	return info
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// boxWidth is a node box's width: "│", the selection marker, the glyph, a
// space, the label, a space and the detail when there is one, a space, "│".
func (n *nodeInfo) boxWidth() int {
	w := 4 + n.label.w + 2
	if n.detail.w > 0 {
		w += 1 + n.detail.w
	}
	return max(w, 4+n.sub.w+2, 7)
}

// stubWidth is the cross stub's width beside the box: "◄─", the letter of a
// conditional edge, a space, the label and "+N".
func (n *nodeInfo) stubWidth() int {
	if len(n.Cross) == 0 {
		return 0
	}
	w := 3 + n.stub.w + n.stubMore.w
	if edgeLetter(n.stubType) != "" {
		w++
	}
	return w
}

// validEdge reports whether e joins two known, distinct nodes.
func (l *Layout) validEdge(e Edge) (from, to int, ok bool) {
	from, okF := l.byID[e.From]
	to, okT := l.byID[e.To]
	return from, to, okF && okT && from != to
}

// assignLayers returns each node's layer and the layers' initial orders.
func (l *Layout) assignLayers(edges []Edge, waves [][]int) ([]int, [][]int) {
	n := len(l.nodes)
	layerOf := make([]int, n)
	for i := range layerOf {
		layerOf[i] = -1
	}
	if waves != nil {
		for wi, w := range waves {
			for _, id := range w {
				if ni, ok := l.byID[id]; ok && layerOf[ni] < 0 {
					layerOf[ni] = wi
				}
			}
		}
		for ni := range layerOf {
			if layerOf[ni] < 0 {
				layerOf[ni] = len(waves)
			}
		}
	} else {
		l.longestPath(edges, layerOf)
	}
	// Drop empty layers.
	maxL := -1
	for _, ly := range layerOf {
		maxL = max(maxL, ly)
	}
	used := make([]int, maxL+1)
	for _, ly := range layerOf {
		used[ly] = 1
	}
	next := 0
	for i, u := range used {
		if u == 1 {
			used[i] = next
			next++
		}
	}
	initial := make([][]int, next)
	for _, w := range waves { // the waves' own order first
		for _, id := range w {
			if ni, ok := l.byID[id]; ok && layerOf[ni] >= 0 {
				ly := used[layerOf[ni]]
				initial[ly] = append(initial[ly], ni)
				layerOf[ni] = -1 - ly // placed
			}
		}
	}
	for ni, ly := range layerOf {
		if ly >= 0 {
			ly = used[ly]
			initial[ly] = append(initial[ly], ni)
			layerOf[ni] = ly
		} else {
			layerOf[ni] = -1 - ly
		}
	}
	return layerOf, initial
}

// longestPath layers nodes by their longest path from a node without
// upstreams, as graph.Waves does; nodes on a cycle go below the rest.
func (l *Layout) longestPath(edges []Edge, layerOf []int) {
	n := len(l.nodes)
	indeg := make([]int, n)
	out := make([][]int, n)
	for _, e := range edges {
		if f, t, ok := l.validEdge(e); ok {
			out[f] = append(out[f], t)
			indeg[t]++
		}
	}
	depth := make([]int, n)
	queue := make([]int, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	maxD := 0
	for qi := 0; qi < len(queue); qi++ {
		u := queue[qi]
		layerOf[u] = depth[u]
		maxD = max(maxD, depth[u])
		for _, v := range out[u] {
			depth[v] = max(depth[v], depth[u]+1)
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	for i := range layerOf {
		if layerOf[i] < 0 {
			layerOf[i] = maxD + 1
		}
	}
}

// buildItems makes an item per node and a dummy per layer a long edge
// crosses, and links them layer to layer.
func (l *Layout) buildItems(edges []Edge, layerOf []int, initial [][]int) {
	l.items = make([]item, len(l.nodes), len(l.nodes)+len(edges))
	for i := range l.nodes {
		n := &l.nodes[i]
		bw := n.boxWidth()
		l.items[i] = item{node: i, layer: layerOf[i], boxW: bw, w: bw + n.stubWidth(), port: bw / 2, size: bw}
		if l.lr { // along a column: the box's rows, its stem on the label's
			l.items[i].w, l.items[i].port, l.items[i].size = l.boxRows, 1, l.boxRows
		}
	}
	l.layers = make([][]int, len(initial))
	for i, ly := range initial {
		l.layers[i] = slices.Clone(ly)
	}
	type key struct {
		from, to int
		typ      ekind
	}
	seen := make(map[key]bool, len(edges))
	var hops []hop
	for _, e := range edges {
		from, to, ok := l.validEdge(e)
		k := l.kindOf(e)
		if !ok || layerOf[from] >= layerOf[to] || seen[key{from, to, k}] {
			continue
		}
		seen[key{from, to, k}] = true
		prev := from
		for ly := layerOf[from] + 1; ly < layerOf[to]; ly++ {
			d := len(l.items)
			l.items = append(l.items, item{node: -1, layer: ly, w: 1, boxW: 1, size: 1, typ: k})
			l.layers[ly] = append(l.layers[ly], d)
			hops = append(hops, hop{prev, d, k})
			prev = d
		}
		hops = append(hops, hop{prev, to, k})
	}
	l.link(hops)
	// A box gets an in-port per arriving (source, type), each on its own
	// column and off the other sources' stems: leave room for them.
	for i := range l.nodes {
		m := &l.items[i]
		k := 0
		for j, e := range m.up {
			if !slices.ContainsFunc(m.up[:j], func(o link) bool { return o == e }) {
				k++
			}
		}
		switch {
		case l.lr && k > m.size-2: // a row of the left border each
			m.size, m.w = k+2, k+2
		case !l.lr && k > 2 && m.boxW < 2*k+3:
			grow := 2*k + 3 - m.boxW
			m.boxW += grow
			m.size += grow
			m.w += grow
			m.port = m.boxW / 2
		}
	}
}

// hop is one layer-to-layer step of an edge.
type hop struct {
	u, v int
	typ  ekind
}

// link sets every item's up and down links, carved out of one array.
func (l *Layout) link(hops []hop) {
	nDown := make([]int, len(l.items))
	nUp := make([]int, len(l.items))
	for _, h := range hops {
		nDown[h.u]++
		nUp[h.v]++
	}
	arena := make([]link, 2*len(hops))
	for i := range l.items {
		l.items[i].down, arena = arena[:0:nDown[i]], arena[nDown[i]:]
		l.items[i].up, arena = arena[:0:nUp[i]], arena[nUp[i]:]
	}
	for _, h := range hops {
		l.items[h.u].down = append(l.items[h.u].down, link{h.v, h.typ})
		l.items[h.v].up = append(l.items[h.v].up, link{h.u, h.typ})
	}
}

// order reduces crossings: from the better of the order given and a
// depth-first order grown from roots, barycenter sweeps down and up,
// keeping the best ordering seen.
func (l *Layout) order(roots []int) {
	pos := make([]int, len(l.items))
	setPos := func(ly []int) {
		for p, it := range ly {
			pos[it] = p
		}
	}
	for _, ly := range l.layers {
		setPos(ly)
	}
	best := cloneLayers(l.layers)
	bestC := l.crossings(pos)
	l.startCrossings = bestC
	if bestC > 0 {
		l.layers = l.depthFirst(roots)
		for _, ly := range l.layers {
			setPos(ly)
		}
		if c := l.crossings(pos); c < bestC {
			bestC, best = c, cloneLayers(l.layers)
		}
	}
	keys := make([]float64, len(l.items))
	for s := 0; s < sweeps && bestC > 0; s++ {
		down := s%2 == 0
		for k := 1; k < len(l.layers); k++ {
			li := k
			if !down {
				li = len(l.layers) - 1 - k
			}
			ly := l.layers[li]
			for _, it := range ly {
				nb := l.items[it].up
				if !down {
					nb = l.items[it].down
				}
				if len(nb) == 0 {
					keys[it] = float64(pos[it])
					continue
				}
				sum := 0
				for _, n := range nb {
					sum += pos[n.item]
				}
				keys[it] = float64(sum) / float64(len(nb))
			}
			slices.SortStableFunc(ly, func(a, b int) int {
				switch {
				case keys[a] < keys[b]:
					return -1
				case keys[a] > keys[b]:
					return 1
				}
				return 0
			})
			setPos(ly)
		}
		if c := l.crossings(pos); c < bestC {
			bestC = c
			best = cloneLayers(l.layers)
		}
	}
	l.layers = best
	for _, ly := range l.layers {
		setPos(ly)
	}
}

// depthFirst orders every layer by when a depth-first walk over the
// links, either way, first reaches its items: from the nodes of roots,
// then from whatever is left, layer by layer. Grown from a lineage's focus,
// where every model is reached along a path that runs only away from it,
// each subtree keeps to a run of every layer, so a tree is drawn without a
// crossing, which barycenter sweeps from an arbitrary start do not always
// find.
func (l *Layout) depthFirst(roots []int) [][]int {
	out := make([][]int, len(l.layers))
	seen := make([]bool, len(l.items))
	var stack []int
	walk := func(start int) {
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[it] {
				continue
			}
			seen[it] = true
			m := &l.items[it]
			out[m.layer] = append(out[m.layer], it)
			// Pushed in reverse, so they are visited in link order.
			for i := len(m.down) - 1; i >= 0; i-- {
				stack = append(stack, m.down[i].item)
			}
			for i := len(m.up) - 1; i >= 0; i-- {
				stack = append(stack, m.up[i].item)
			}
		}
	}
	for _, id := range roots {
		if ni, ok := l.byID[id]; ok {
			walk(ni)
		}
	}
	for _, ly := range l.layers {
		for _, it := range ly {
			walk(it)
		}
	}
	return out
}

func cloneLayers(ls [][]int) [][]int {
	out := make([][]int, len(ls))
	for i, ly := range ls {
		out[i] = slices.Clone(ly)
	}
	return out
}

// crossings counts the edge crossings between every pair of adjacent
// layers: inversions of the lower ends, in upper-end order (a Fenwick tree).
func (l *Layout) crossings(pos []int) int {
	total := 0
	var seq, tree, ends []int
	for li := 0; li+1 < len(l.layers); li++ {
		seq = seq[:0]
		for _, u := range l.layers[li] {
			ends = ends[:0]
			for _, d := range l.items[u].down {
				ends = append(ends, pos[d.item])
			}
			slices.Sort(ends)
			seq = append(seq, ends...)
		}
		n := len(l.layers[li+1])
		tree = slices.Grow(tree[:0], n+1)[:n+1]
		clear(tree)
		for i, v := range seq {
			le := 0 // inserted ends <= v
			for j := v + 1; j > 0; j -= j & -j {
				le += tree[j]
			}
			total += i - le
			for j := v + 1; j <= n; j += j & -j {
				tree[j]++
			}
		}
	}
	return total
}

// gap is the blank columns kept between two neighbours in a layer.
func (l *Layout) gap(a, b int) int {
	if l.lr || l.items[a].node < 0 || l.items[b].node < 0 {
		return 1
	}
	return 2
}

// place gives every item its x: layers packed left, then alternately pulled
// under their upstreams and over their downstreams, each layer solved as an
// isotonic regression (the order and the gaps are kept, the squared distance
// from the wanted positions minimised); dummies weigh most, so long edges
// run straight.
func (l *Layout) place() {
	for _, ly := range l.layers {
		x := 0
		for p, it := range ly {
			l.items[it].x = x
			x += l.items[it].w
			if p+1 < len(ly) {
				x += l.gap(it, ly[p+1])
			}
		}
	}
	var buf placeBuf
	for range alignPasses {
		for li := 1; li < len(l.layers); li++ {
			l.align(li, true, &buf)
		}
		for li := len(l.layers) - 2; li >= 0; li-- {
			l.align(li, false, &buf)
		}
	}
	for li := 1; li < len(l.layers); li++ {
		l.align(li, true, &buf)
	}
	minX := math.MaxInt
	for i := range l.items {
		minX = min(minX, l.items[i].x)
	}
	for i := range l.items {
		l.items[i].x -= minX
		l.width = max(l.width, l.items[i].x+l.items[i].w)
	}
	l.fixDummies()
}

type placeBuf struct {
	target, weight, val, wsum []float64
	size                      []int
}

func (l *Layout) align(li int, byUp bool, b *placeBuf) {
	ly := l.layers[li]
	n := len(ly)
	b.target = slices.Grow(b.target[:0], n)[:n]
	b.weight = slices.Grow(b.weight[:0], n)[:n]
	off := 0
	for p, it := range ly {
		m := &l.items[it]
		nb := m.up
		if !byUp {
			nb = m.down
		}
		want, wt := float64(m.x), 0.25
		if len(nb) > 0 {
			sum := 0
			for _, e := range nb {
				u := &l.items[e.item]
				sum += u.x + u.port
			}
			want = float64(sum)/float64(len(nb)) - float64(m.port)
			wt = 1
			if m.node < 0 {
				wt = 8
			}
		}
		b.target[p] = want - float64(off)
		b.weight[p] = wt
		off += m.w
		if p+1 < n {
			off += l.gap(it, ly[p+1])
		}
	}
	// Pool adjacent violators.
	b.val, b.wsum, b.size = b.val[:0], b.wsum[:0], b.size[:0]
	for p := range n {
		b.val = append(b.val, b.target[p])
		b.wsum = append(b.wsum, b.weight[p])
		b.size = append(b.size, 1)
		for k := len(b.val) - 1; k > 0 && b.val[k-1] > b.val[k]; k-- {
			w := b.wsum[k-1] + b.wsum[k]
			b.val[k-1] = (b.val[k-1]*b.wsum[k-1] + b.val[k]*b.wsum[k]) / w
			b.wsum[k-1] = w
			b.size[k-1] += b.size[k]
			b.val, b.wsum, b.size = b.val[:k], b.wsum[:k], b.size[:k]
		}
	}
	p, off := 0, 0
	for k, v := range b.val {
		x := int(math.Floor(v + 0.5))
		for range b.size[k] {
			it := ly[p]
			l.items[it].x = x + off
			off += l.items[it].w
			if p+1 < n {
				off += l.gap(it, ly[p+1])
			}
			p++
		}
	}
}

// fixDummies moves a dummy off a column where another item's stem comes
// down into the same channel, when its neighbours leave room, so two lines
// never run on top of each other.
func (l *Layout) fixDummies() {
	stems := map[int]int{}
	for li := 0; li+1 < len(l.layers); li++ {
		clear(stems)
		for _, u := range l.layers[li] {
			if m := &l.items[u]; len(m.down) > 0 {
				stems[m.x+m.port] = u
			}
		}
		ly := l.layers[li+1]
		for p, d := range ly {
			m := &l.items[d]
			if m.node >= 0 || len(m.up) == 0 {
				continue
			}
			owner := m.up[0].item
			free := func(x int) bool { o, ok := stems[x]; return !ok || o == owner }
			if free(m.x) {
				continue
			}
			lo, hi := math.MinInt, math.MaxInt
			if p > 0 {
				q := ly[p-1]
				lo = l.items[q].x + l.items[q].w + l.gap(q, d)
			}
			if p+1 < len(ly) {
				q := ly[p+1]
				hi = l.items[q].x - l.gap(d, q) - 1
			}
			for _, dx := range []int{1, -1, 2, -2} {
				x := m.x + dx
				if x >= lo && x <= hi && x >= 0 && free(x) {
					m.x = x
					l.width = max(l.width, x+1)
					break
				}
			}
		}
	}
}

// Crossings is how many pairs of edges cross between adjacent layers in the
// order the layout drew: what the barycenter sweeps minimise, exposed so a
// test can hold a crossing-free graph to zero and report the rest.
func (l *Layout) Crossings() int {
	pos := make([]int, len(l.items))
	for _, ly := range l.layers {
		for p, it := range ly {
			pos[it] = p
		}
	}
	return l.crossings(pos)
}
