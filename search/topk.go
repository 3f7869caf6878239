package search

// hit is a candidate: its integer distance and its row, the position of the
// vector (slot queries) or state (state queries) in memory order, which is
// the order of episode, step and slot. Hits are ranked by (dist, row).
type hit struct {
	dist uint64
	row  uint64
}

func (a hit) less(b hit) bool { return a.dist < b.dist || a.dist == b.dist && a.row < b.row }

// topK keeps the k least hits: a max-heap on (dist, row).
type topK struct {
	k int
	h []hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]hit, 0, k)} }

// full reports whether k hits are held; worst is then the largest.
func (t *topK) full() bool { return len(t.h) == t.k }
func (t *topK) worst() hit { return t.h[0] }

// push offers a hit.
func (t *topK) push(x hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.h[p].less(t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !x.less(t.h[0]) {
		return
	}
	t.h[0] = x
	for i, n := 0, len(t.h); ; {
		l, big := 2*i+1, i
		if l < n && t.h[big].less(t.h[l]) {
			big = l
		}
		if r := l + 1; r < n && t.h[big].less(t.h[r]) {
			big = r
		}
		if big == i {
			break
		}
		t.h[big], t.h[i] = t.h[i], t.h[big]
		i = big
	}
}

// sorted returns the hits in increasing order (and empties t).
func (t *topK) sorted() []hit {
	out := make([]hit, len(t.h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = t.h[0]
		last := len(t.h) - 1
		t.h[0] = t.h[last]
		t.h = t.h[:last]
		for j, n := 0, len(t.h); ; {
			l, big := 2*j+1, j
			if l < n && t.h[big].less(t.h[l]) {
				big = l
			}
			if r := l + 1; r < n && t.h[big].less(t.h[r]) {
				big = r
			}
			if big == j {
				break
			}
			t.h[big], t.h[j] = t.h[j], t.h[big]
			j = big
		}
	}
	return out
}
