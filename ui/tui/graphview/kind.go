package graphview

import (
	"cmp"

	"github.com/bollhav/bollhav/graph"
)

// ekind is everything that tells two edges' drawings apart: the dependency
// type, the colour class, dashing and the mark. Edges of one source and one
// kind share a route (a net), so a lineage edge coloured by its own verdict
// never shares a line with one of another verdict.
type ekind struct {
	typ    graph.DependencyType
	class  uint8
	dashed bool
	mark   int16 // index into Layout.marks; -1: the type's letter, if any
}

// kindOf is e's kind, its mark interned in l.
func (l *Layout) kindOf(e Edge) ekind {
	k := ekind{typ: e.Type, class: min(e.Class, maxClasses), dashed: e.Dashed, mark: -1}
	if e.Mark != "" {
		t := l.makeText(e.Mark, maxMark)
		for i, m := range l.marks {
			if textEqual(m, t) {
				k.mark = int16(i)
				return k
			}
		}
		k.mark = int16(len(l.marks))
		l.marks = append(l.marks, t)
	}
	return k
}

func textEqual(a, b text) bool {
	if a.w != b.w || len(a.cl) != len(b.cl) {
		return false
	}
	for i := range a.cl {
		if a.cl[i] != b.cl[i] {
			return false
		}
	}
	return true
}

// cond is whether the edge is drawn dashed: a conditional type, or asked.
func (k ekind) cond() bool { return k.typ != graph.Success || k.dashed }

// compareKind orders kinds: by type, then class, dashing and mark.
func compareKind(a, b ekind) int {
	if c := cmp.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	if c := cmp.Compare(a.class, b.class); c != 0 {
		return c
	}
	if a.dashed != b.dashed {
		if a.dashed {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.mark, b.mark)
}

// cellByte keeps what a cell needs of a kind: bit 0 dashed, the class
// above it.
func (k ekind) cellByte() uint8 {
	b := k.class << 1
	if k.cond() {
		b |= 1
	}
	return b
}

// byteSlot is the style slot of a cell byte: its class's, or the edge or
// conditional edge style.
func byteSlot(b uint8) uint8 {
	if c := b >> 1; c > 0 {
		return stClass + c - 1
	}
	if b&1 == 0 {
		return stEdge
	}
	return stCond
}

// edgeSlot is the style slot edges of kind k are drawn in.
func edgeSlot(k ekind) uint8 { return byteSlot(k.cellByte()) }

// markText is what is written above k's arrow heads, one cluster a row.
func (l *Layout) markText(k ekind) text {
	if k.mark >= 0 {
		return l.marks[k.mark]
	}
	if lt := edgeLetter(k.typ); lt != "" {
		return text{cl: []cluster{{sid(lt), 1}}, w: 1}
	}
	return text{}
}

// markSlot is the style of k's mark: its class's colour, or the
// conditional edges' style of the type letters.
func markSlot(k ekind) uint8 {
	if k.class > 0 {
		return stClass + k.class - 1
	}
	return stCond
}
