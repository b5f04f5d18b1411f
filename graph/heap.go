package graph

import "container/heap"

// Heap is a min-heap of T in the order cmp gives (negative: a before b):
// Kahn's algorithm here takes the smallest name free to go next, and the
// engine's queues (the triage queue's ranked units, the live gate's clock
// flips) take their earliest the same way. The zero Heap is not usable;
// make one with NewHeap.
type Heap[T any] struct {
	items []T
	cmp   func(a, b T) int
}

// NewHeap returns an empty heap ordered by cmp.
func NewHeap[T any](cmp func(a, b T) int) *Heap[T] { return &Heap[T]{cmp: cmp} }

// Len is the number of items held.
func (h *Heap[T]) Len() int { return len(h.items) }

// Push adds x.
func (h *Heap[T]) Push(x T) { heap.Push((*heapOrder[T])(h), x) }

// Pop removes and returns the first item; the heap must not be empty.
func (h *Heap[T]) Pop() T { return heap.Pop((*heapOrder[T])(h)).(T) }

// Peek returns the first item without removing it; the heap must not be
// empty.
func (h *Heap[T]) Peek() T { return h.items[0] }

// Reset empties the heap, keeping its storage, and refills it with items
// in any order.
func (h *Heap[T]) Reset(items ...T) {
	h.items = append(h.items[:0], items...)
	heap.Init((*heapOrder[T])(h))
}

// heapOrder is Heap as container/heap sees it.
type heapOrder[T any] Heap[T]

func (h *heapOrder[T]) Len() int           { return len(h.items) }
func (h *heapOrder[T]) Less(i, j int) bool { return h.cmp(h.items[i], h.items[j]) < 0 }
func (h *heapOrder[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *heapOrder[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *heapOrder[T]) Pop() any {
	x := h.items[len(h.items)-1]
	var zero T
	h.items[len(h.items)-1] = zero
	h.items = h.items[:len(h.items)-1]
	return x
}
