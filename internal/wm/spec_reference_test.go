package wm_test

// An independent implementation of SPEC.md sections 1.4, 2.3, 3, 4 and 5.2,
// written from the text alone, plainly (lists, linear searches, no
// caches), to check that the text specifies the world model completely:
// it must give the predictions of package wm, coordinate by coordinate,
// on every conformance vector's model and input. It does not share code
// with package wm.

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/rans"
	"github.com/wmzip/wmzip/internal/wm"
)

// 1.4 Fixed-point functions.

type specTables struct{ log2frac, exp2neg [256]uint64 }

func loadSpecTables(t *testing.T) *specTables {
	var st specTables
	for name, dst := range map[string]*[256]uint64{"log2frac.txt": &st.log2frac, "exp2neg.txt": &st.exp2neg} {
		f, err := os.Open(filepath.Join("..", "..", "testdata", "conformance", name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "#") {
				continue
			}
			var i int
			var v uint64
			if _, err := fmt.Sscan(sc.Text(), &i, &v); err != nil {
				t.Fatal(err)
			}
			dst[i] = v
		}
		f.Close()
	}
	return &st
}

func (st *specTables) lg(x uint64) int64 {
	if x <= 1 {
		return 0
	}
	e := bits.Len64(x) - 1
	var fr uint64
	if e >= 8 {
		fr = (x >> (e - 8)) % 256
	} else {
		fr = (x << (8 - e)) % 256
	}
	return 256*int64(e) + int64(st.log2frac[fr])
}

func (st *specTables) W(d int64) uint64 {
	d = max(d, 0)
	if d/256 >= 30 {
		return 0
	}
	return st.exp2neg[d%256] >> (d / 256)
}

// 2.3 Quantize, returning frequencies.
func specQuantize(w []uint64, P uint) []uint64 {
	k := len(w)
	var total uint64
	amax := 0
	for s, x := range w {
		total += x
		if x > w[amax] {
			amax = s
		}
	}
	f := make([]uint64, k)
	if total == 0 {
		q, r := (uint64(1)<<P)/uint64(k), (uint64(1)<<P)%uint64(k)
		for s := range f {
			f[s] = q
			if uint64(s) < r {
				f[s]++
			}
		}
		return f
	}
	w = slices.Clone(w)
	if total >= 1<<32 {
		sh := bits.Len64(total) - 32
		total = 0
		for s := range w {
			w[s] >>= sh
			total += w[s]
		}
	}
	spare := uint64(1)<<P - uint64(k)
	factor := (spare << 32) / total
	var sum uint64
	for s := range w {
		hi, lo := bits.Mul64(w[s], factor)
		f[s] = 1 + (hi<<32 | lo>>32)
		sum += f[s]
	}
	f[amax] += uint64(1)<<P - sum
	return f
}

// 3. Model file.

type specRef struct{ store, r, x int } // store 1 history, 2 reference

type specDictTile struct {
	tile  []int
	count int
	first specRef
	occ   []specRef
}

type specModel struct {
	st             *specTables
	version        int
	copy           bool // the copy level (4.16)
	S, M, K, N     int
	P              uint
	hits           [16][8]uint64
	mis, cn        [8]uint64
	hitsS          [][8]uint64
	C1, C2         int
	FB1, FB2       [][]uint64 // rows of K frequencies
	e1, e2         uint64
	A              uint64
	CONT           [][][2]int
	OFF            [][]uint64 // 256 rows of S, or nil
	hitsP          [][9][8]uint64
	start          []int
	RefStates      int
	REF            [][]int // per reference state, N codes
	BKT            []int
	capOcc, capAnc int
	capSucc        int // 0: no predecessors
	next, prev     []int
	dict           []*specDictTile
	DICT           [][]int // per first code: dictionary tile indices
	pairs          [][][4]int
	DC             []uint64
	DCtot          uint64
	PW1, PW2       [][]uint64
	offFloor       []uint64
	offD           [][]int
	offX           [][]uint64
	sections       int // offset of the section count
	// Where fields lie in the file, for its canonical serialization
	// (3.5): A (contAt) to the end of CONT (contEnd), RefEpisodes (epAt)
	// to the end of RefStates (refEnd); OffRows and CtxRows.
	contAt, contEnd, epAt, refEnd int
	offRows, ctxRows              int
}

func parseSpecModel(t *testing.T, st *specTables, b []byte) *specModel {
	le := binary.LittleEndian
	m := &specModel{st: st}
	p := 0
	u16 := func() uint64 { v := le.Uint16(b[p:]); p += 2; return uint64(v) }
	u32 := func() uint64 { v := le.Uint32(b[p:]); p += 4; return uint64(v) }
	p = 4
	m.version = int(u16())
	if fl := u16(); m.version == 4 {
		// 3.1: version 4 has the fields of version 2 or 3 (flag bit 1);
		// flag bit 2 is the copy level (4.16).
		m.version, m.copy = 2+int(fl>>1&1), fl&4 != 0
	}
	p = 8
	m.S, m.M, m.K = int(u32()), int(u32()), int(u32())
	m.N = m.S * m.M
	m.P = uint(b[20])
	p = 24
	for bk := range 16 {
		for c := range 8 {
			m.hits[bk][c] = u32()
		}
	}
	for c := range 8 {
		m.mis[c], m.cn[c] = u32(), u32()
	}
	m.hitsS = make([][8]uint64, m.S)
	for s := range m.S {
		for c := range 8 {
			m.hitsS[s][c] = u32()
		}
	}
	rows := func(n, k int) [][]uint64 {
		out := make([][]uint64, n)
		for i := range out {
			out[i] = make([]uint64, k)
			for v := range out[i] {
				out[i][v] = u16() + 1
			}
		}
		return out
	}
	var beta [2]uint64
	var offRows, ctxRows int
	if m.version == 3 {
		m.C1, m.C2 = int(u32()), int(u32())
		m.e1, m.e2 = u16(), u16()
		beta[0], beta[1] = u32(), u32()
	} else {
		m.C1 = int(u32())
		m.FB1 = rows(m.M*m.C1, m.K)
		m.C2 = int(u32())
		m.e1, m.e2 = u16(), u16()
		m.FB2 = rows(m.M*m.C2, m.K)
	}
	if m.version == 1 {
		m.A = 128
		for x := range m.S {
			m.CONT = append(m.CONT, [][2]int{{(x + 1) % m.S, 32768}})
		}
		m.capOcc, m.capAnc, m.capSucc = 16, 16, 0
	} else {
		m.contAt = p
		m.A = u16()
		for range m.S {
			k := int(b[p])
			p++
			var l [][2]int
			for range k {
				l = append(l, [2]int{int(u16()), int(u16())})
			}
			m.CONT = append(m.CONT, l)
		}
		m.contEnd = p
		// Version 3 codes the values of OFF and hitsP in the store (3.4).
		if offRows = int(u32()); offRows == 256 && m.version == 2 {
			m.OFF = rows(256, m.S)
		}
		if ctxRows = int(u32()); ctxRows == 9 && m.version == 2 {
			m.hitsP = make([][9][8]uint64, m.S)
			for s := range m.S {
				for pc := range 9 {
					for c := range 8 {
						m.hitsP[s][pc][c] = u32()
					}
				}
			}
		}
		m.capOcc, m.capAnc, m.capSucc = 32, 32, 64
	}
	m.offRows, m.ctxRows = offRows, ctxRows
	m.epAt = p
	ne := int(u32())
	for range ne {
		m.start = append(m.start, int(u32()))
	}
	m.RefStates = int(u32())
	m.refEnd = p
	if m.version == 3 {
		n := int(u32())
		m.REF, m.BKT = specStore(t, m, b[p:p+n], offRows, ctxRows)
		p += n
		m.sections = p
		m.derive()
		m.FB1 = specFallRows(m, 1, m.C1, beta[0])
		m.FB2 = specFallRows(m, 2, m.C2, beta[1])
		m.derivePowers()
		return m
	}
	for range m.RefStates {
		st := make([]int, m.N)
		for j := range st {
			if m.K <= 256 {
				st[j] = int(b[p])
				p++
			} else {
				st[j] = int(u16())
			}
		}
		m.REF = append(m.REF, st)
	}
	for range m.RefStates {
		m.BKT = append(m.BKT, int(b[p]))
		p++
	}
	m.sections = p
	m.derive()
	m.derivePowers()
	return m
}

// specStore decodes the reference store of a version-3 file (3.4).
func specStore(t *testing.T, m *specModel, stream []byte, offRows, ctxRows int) ([][]int, []int) {
	d, err := rans.NewDecoder(1, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Reset(stream); err != nil {
		t.Fatal(err)
	}
	newPR := func(n int) []uint32 {
		a := make([]uint32, n)
		for i := range a {
			a[i] = 32768
		}
		return a
	}
	dec := func(pr *uint32) int {
		b := d.DecodeBinary(0, *pr)
		if b == 0 {
			*pr += (65536 - *pr) >> 4
		} else {
			*pr -= *pr >> 4
		}
		return b
	}
	tree := func(n int, pr func(node int) *uint32) int {
		node := 1
		for range n {
			node = 2*node + dec(pr(node))
		}
		return node - 1<<n
	}
	nS, nK := bits.Len(uint(m.S-1)), bits.Len(uint(m.K-1))
	PB, PO, PD, PL, PV := newPR(256), newPR(48), newPR(1<<nS), newPR(32), newPR(1<<20)
	dist, prevOp, prevB := m.S, 3, 0
	lastOp := make([]int, m.S)
	for x := range lastOp {
		lastOp[x] = 3
	}
	var flat []int // the store's codes, tile after tile
	var bkt []int
	for r := range m.RefStates {
		b := tree(4, func(node int) *uint32 { return &PB[16*prevB+node] })
		bkt = append(bkt, b)
		prevB = b
		for x := range m.S {
			p := r*m.S + x
			c := 4*prevOp + lastOp[x]
			op := 0
			if dec(&PO[3*c]) == 1 {
				op = 1
				if dec(&PO[3*c+1]) == 1 {
					op = 2 + dec(&PO[3*c+2])
				}
			}
			src := 0
			switch op {
			case 0:
				src = p - dist
			case 1:
				dist = m.S
				src = p - dist
			case 2:
				delta := tree(nS, func(node int) *uint32 { return &PD[node] })
				l := tree(5, func(node int) *uint32 { return &PL[node] })
				dr := 0
				if l > 0 {
					dr = 1
					for range l - 1 {
						dr = 2*dr + d.DecodeBinary(0, 32768)
					}
				}
				src = (r-dr)*m.S + (x+delta)%m.S
				dist = p - src
			case 3:
				for mm := range m.M {
					ctx := m.K
					if x > 0 {
						ctx = flat[(p-1)*m.M+mm]
					}
					flat = append(flat, tree(nK, func(node int) *uint32 {
						return &PV[((mm*(m.K+1)+ctx)<<nK+node)%(1<<20)]
					}))
				}
			}
			if op != 3 {
				if src < 0 || src >= p {
					t.Fatalf("store copies tile %d at %d", src, p)
				}
				flat = append(flat, flat[src*m.M:(src+1)*m.M]...)
			}
			prevOp, lastOp[x] = op, op
		}
	}
	// The tables: values in rows, each the zigzag of its difference to the
	// previous one of its row, by TREE(6) of its bit length and raw bits.
	PT := [2][]uint32{newPR(64), newPR(64)}
	values := func(tab, rows, k int) [][]uint64 {
		var out [][]uint64
		for range rows {
			row := make([]uint64, k)
			prev := int64(0)
			for i := range row {
				l := tree(6, func(node int) *uint32 { return &PT[tab][node] })
				z := int64(0)
				if l > 0 {
					z = 1
					for range l - 1 {
						z = 2*z + int64(d.DecodeBinary(0, 32768))
					}
				}
				v := prev + z/2
				if z%2 == 1 {
					v = prev - (z+1)/2
				}
				row[i], prev = uint64(v), v
			}
			out = append(out, row)
		}
		return out
	}
	if offRows == 256 {
		m.OFF = values(0, 256, m.S)
		for _, r := range m.OFF {
			for i := range r {
				r[i]++ // stored minus 1
			}
		}
	}
	if ctxRows == 9 {
		hp := values(1, m.S*9, 8)
		m.hitsP = make([][9][8]uint64, m.S)
		for s := range m.S {
			for pc := range 9 {
				copy(m.hitsP[s][pc][:], hp[s*9+pc])
			}
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	var ref [][]int
	for r := range m.RefStates {
		ref = append(ref, flat[r*m.N:(r+1)*m.N])
	}
	return ref, bkt
}

// specFallRows derives fallback table 1 or 2 of a version-3 model from its
// dictionary's novel tiles (3.3).
func specFallRows(m *specModel, table, C int, beta uint64) [][]uint64 {
	if C == 0 {
		return nil
	}
	cnt := make([][]uint64, m.M*C)
	for i := range cnt {
		cnt[i] = make([]uint64, m.K)
	}
	for _, dt := range m.dict {
		r, x := dt.first.r, dt.first.x
		for mm := range m.M {
			v := m.REF[r][x*m.M+mm]
			ctx := 0
			if C > 1 {
				ctx = m.K
				if table == 1 && x > 0 {
					ctx = m.REF[r][(x-1)*m.M+mm]
				} else if table == 2 && mm > 0 {
					ctx = m.REF[r][x*m.M+mm-1]
				}
			}
			cnt[mm*C+ctx][v]++
		}
	}
	out := make([][]uint64, m.M*C)
	for mm := range m.M {
		o := make([]uint64, m.K)
		var O uint64
		for ctx := range C {
			for v, c := range cnt[mm*C+ctx] {
				o[v] += c
				O += c
			}
		}
		pm := make([]uint64, m.K)
		for v := range pm {
			pm[v] = ((2*o[v] + 1) << 16) / (2*O + uint64(m.K))
		}
		for ctx := range C {
			n := make([]uint64, m.K)
			var sum uint64
			for v := range n {
				n[v] = cnt[mm*C+ctx][v]<<24 + beta*pm[v]
				sum += n[v]
			}
			sh := max(0, bits.Len64(sum)-32)
			for v := range n {
				n[v] >>= sh
			}
			out[mm*C+ctx] = specQuantize(n, 16)
		}
	}
	return out
}

func (m *specModel) tileOf(state []int, x int) []int { return state[x*m.M : (x+1)*m.M] }

// derive makes the structures of 3.2.
func (m *specModel) derive() {
	epOf := make([]int, m.RefStates)
	for i, s := range m.start {
		end := m.RefStates
		if i+1 < len(m.start) {
			end = m.start[i+1]
		}
		for r := s; r < end; r++ {
			epOf[r] = i
		}
	}
	m.next, m.prev = make([]int, m.RefStates), make([]int, m.RefStates)
	for r := range m.RefStates {
		m.next[r], m.prev[r] = -1, -1
		if r+1 < m.RefStates && epOf[r+1] == epOf[r] {
			m.next[r] = r + 1
		}
		if r > 0 && epOf[r-1] == epOf[r] {
			m.prev[r] = r - 1
		}
	}
	for r := range m.RefStates {
		for x := range m.S {
			tl := m.tileOf(m.REF[r], x)
			found := false
			for _, d := range m.dict {
				if slices.Equal(d.tile, tl) {
					d.count++
					if len(d.occ) < m.capOcc {
						d.occ = append(d.occ, specRef{2, r, x})
					}
					found = true
					break
				}
			}
			if !found {
				m.dict = append(m.dict, &specDictTile{tile: tl, count: 1, first: specRef{2, r, x}, occ: []specRef{{2, r, x}}})
			}
		}
	}
	second := func(d *specDictTile) int {
		if m.M == 1 {
			return 0
		}
		return d.tile[1]
	}
	m.DICT = make([][]int, m.K)
	m.pairs = make([][][4]int, m.K)
	m.DC = make([]uint64, m.K)
	for id, d := range m.dict {
		m.DICT[d.tile[0]] = append(m.DICT[d.tile[0]], id)
		m.DC[d.tile[0]] += uint64(d.count)
		m.DCtot += uint64(d.count)
	}
	for v, l := range m.DICT {
		slices.SortStableFunc(l, func(a, b int) int {
			da, db := m.dict[a], m.dict[b]
			if second(da) != second(db) {
				return second(da) - second(db)
			}
			if da.count != db.count {
				return db.count - da.count
			}
			return a - b // first occurrence: dictionary order
		})
		for lo := 0; lo < len(l); {
			hi, cnt := lo, 0
			for hi < len(l) && second(m.dict[l[hi]]) == second(m.dict[l[lo]]) {
				cnt += m.dict[l[hi]].count
				hi++
			}
			m.pairs[v] = append(m.pairs[v], [4]int{second(m.dict[l[lo]]), cnt, lo, hi})
			lo = hi
		}
	}
	if m.OFF != nil {
		n := min(4, m.S)
		for _, row := range m.OFF {
			var d []int
			for range n {
				best := -1
				for o, f := range row {
					if !slices.Contains(d, o) && (best < 0 || f > row[best]) {
						best = o
					}
				}
				d = append(d, best)
			}
			var floor uint64
			if m.S > 4 {
				var sum uint64
				for o, f := range row {
					if !slices.Contains(d, o) {
						sum += f
					}
				}
				floor = sum / uint64(m.S-n)
			}
			var x []uint64
			for _, o := range d {
				x = append(x, row[o]-floor)
			}
			m.offFloor = append(m.offFloor, floor)
			m.offD = append(m.offD, d)
			m.offX = append(m.offX, x)
		}
	}
}

// derivePowers makes the powers of the fallback rows (3.2), once the rows
// are known.
func (m *specModel) derivePowers() {
	pow := func(f []uint64, ex uint64) []uint64 {
		l := make([]int64, len(f))
		mx := int64(-1 << 60)
		for v := range f {
			l[v] = int64(ex) * m.st.lg(f[v]) >> 8
			mx = max(mx, l[v])
		}
		out := make([]uint64, len(f))
		for v := range f {
			out[v] = min(m.st.W(mx-l[v]), 65535)
		}
		return out
	}
	if m.C2 > 0 {
		for _, r := range m.FB1 {
			m.PW1 = append(m.PW1, pow(r, m.e1))
		}
		for _, r := range m.FB2 {
			m.PW2 = append(m.PW2, pow(r, m.e2))
		}
	}
}

// 1.5 CRC32C, bit by bit: reflected polynomial 0x82F63B78, initial value
// and final XOR 0xFFFFFFFF.
func specCRC32C(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

// 3.5 Canonical serialization and model ID.

// specModelID returns the model ID of model file raw: the first 16 bytes
// of the SHA-256 of its canonical serialization.
func specModelID(t *testing.T, st *specTables, raw []byte) [16]byte {
	le := binary.LittleEndian
	canon := raw // versions 1 and 2, and 4 with the fields of version 2
	if v, fl := le.Uint16(raw[4:]), le.Uint16(raw[6:]); v == 3 || v == 4 && fl&2 != 0 {
		// The fields of version 3: read as version 3, written as version
		// 2, then for version 4 under its version and level flag.
		b := slices.Clone(raw)
		le.PutUint16(b[4:], 3)
		le.PutUint16(b[6:], 0)
		canon = specCanonical(b, parseSpecModel(t, st, b))
		if v == 4 {
			le.PutUint16(canon[4:], 4)
			le.PutUint16(canon[6:], fl&^2)
		}
	}
	sum := sha256.Sum256(canon)
	return [16]byte(sum[:16])
}

// specCanonical writes version-3 file b, parsed as m, as version 2.
func specCanonical(b []byte, m *specModel) []byte {
	le := binary.LittleEndian
	out := slices.Clone(b[:600+32*m.S]) // the header, hits, mis, cn and hitsS
	le.PutUint16(out[4:], 2)
	rows := func(rs [][]uint64) {
		for _, r := range rs {
			for _, f := range r {
				out = le.AppendUint16(out, uint16(f-1))
			}
		}
	}
	out = le.AppendUint32(out, uint32(m.C1))
	rows(m.FB1)
	out = le.AppendUint32(out, uint32(m.C2))
	out = le.AppendUint16(out, uint16(m.e1))
	out = le.AppendUint16(out, uint16(m.e2))
	rows(m.FB2)
	out = append(out, b[m.contAt:m.contEnd]...) // A and CONT
	out = le.AppendUint32(out, uint32(m.offRows))
	if m.offRows == 256 {
		rows(m.OFF)
	}
	out = le.AppendUint32(out, uint32(m.ctxRows))
	if m.ctxRows == 9 {
		for s := range m.S {
			for pc := range 9 {
				for c := range 8 {
					out = le.AppendUint32(out, uint32(m.hitsP[s][pc][c]))
				}
			}
		}
	}
	out = append(out, b[m.epAt:m.refEnd]...) // RefEpisodes, start, RefStates
	for _, r := range m.REF {
		for _, c := range r {
			if m.K <= 256 {
				out = append(out, byte(c))
			} else {
				out = le.AppendUint16(out, uint16(c))
			}
		}
	}
	for _, k := range m.BKT {
		out = append(out, byte(k))
	}
	return append(out, b[m.sections:]...)
}

// 3.6 Bundles.

// specReject is a file the text rejects, and the class it rejects it as
// (8.3: invalid, unsupported, model-mismatch).
type specReject struct{ class, why string }

func (r *specReject) Error() string { return r.class + ": " + r.why }

func specInvalid(format string, a ...any) error {
	return &specReject{"invalid", fmt.Sprintf(format, a...)}
}

// specCheckMember checks what this implementation can of a member's model
// file: its header, and that its sections end where the member does
// (3.1). Its parser checks no other field (the vectors of 3.1 are package
// wm's to reject); a member it cannot read is invalid.
func specCheckMember(t *testing.T, st *specTables, raw []byte) (err error) {
	le := binary.LittleEndian
	if len(raw) < 24 {
		return specInvalid("%d bytes, shorter than the header", len(raw))
	}
	if string(raw[:4]) != "WMZM" {
		return specInvalid("magic %q", raw[:4])
	}
	// (3.6 says not whether a member of another model version makes the
	// bundle invalid or unsupported; this takes the model file's class.)
	v, fl := le.Uint16(raw[4:]), le.Uint16(raw[6:])
	if v < 1 || v > 4 {
		return &specReject{"unsupported", fmt.Sprintf("model version %d", v)}
	}
	defer func() {
		if recover() != nil {
			err = specInvalid("the fields run past the member's end")
		}
	}()
	b := raw
	if v == 4 {
		b = slices.Clone(raw)
		le.PutUint16(b[4:], 2+fl>>1&1)
		le.PutUint16(b[6:], 0)
	}
	sm := parseSpecModel(t, st, b)
	p := sm.sections + 4
	for range le.Uint32(b[sm.sections:]) {
		p += 8 + int(le.Uint32(b[p+4:]))
	}
	if p != len(b) {
		return specInvalid("sections end at %d of %d bytes", p, len(b))
	}
	return nil
}

// specBundle reads a bundle: its members' files, in order, and their IDs.
func specBundle(t *testing.T, st *specTables, b []byte) ([][]byte, [][16]byte, error) {
	le := binary.LittleEndian
	if len(b) < 16 || string(b[:4]) != "WMZB" {
		return nil, nil, specInvalid("not a bundle of 16 bytes or more")
	}
	if v := le.Uint16(b[4:]); v != 1 {
		return nil, nil, &specReject{"unsupported", fmt.Sprintf("bundle version %d", v)}
	}
	if f := le.Uint16(b[6:]); f != 0 {
		return nil, nil, specInvalid("flags %#x", f)
	}
	n := uint64(le.Uint32(b[8:]))
	if n < 1 || n > 16 {
		return nil, nil, specInvalid("n = %d", n)
	}
	end := uint64(len(b)) - 4
	if 12+24*n > end {
		return nil, nil, specInvalid("the member list runs past the CRC")
	}
	if got, want := specCRC32C(b[:end]), le.Uint32(b[end:]); got != want {
		return nil, nil, specInvalid("CRC %08x, stored %08x", got, want)
	}
	var members [][]byte
	var ids [][16]byte
	p := 12 + 24*n
	for i := range n {
		e := b[12+24*i:]
		l := le.Uint64(e)
		if l < 24 || l > end-p {
			return nil, nil, specInvalid("member %d of %d bytes, %d left before the CRC", i, l, end-p)
		}
		id := [16]byte(e[8:24])
		if slices.Contains(ids, id) {
			return nil, nil, specInvalid("member %d repeats model %x", i, id)
		}
		ids = append(ids, id)
		members = append(members, b[p:p+l])
		p += l
	}
	if p != end {
		return nil, nil, specInvalid("%d bytes after the last member", end-p)
	}
	for i, raw := range members {
		if err := specCheckMember(t, st, raw); err != nil {
			return nil, nil, fmt.Errorf("member %d: %w", i, err)
		}
		if id := specModelID(t, st, raw); id != ids[i] {
			return nil, nil, specInvalid("member %d is model %x, listed as %x", i, id, ids[i])
		}
	}
	return members, ids, nil
}

// specVectorModel returns the model file a decoder given the vector's
// model decodes file with: the model file, or the member of a bundle whose
// ID the file's header names (bytes 32..47, 6.2), and its index (−1 for a
// model file).
func specVectorModel(t *testing.T, st *specTables, dir, model string, file []byte) ([]byte, int) {
	raw, err := os.ReadFile(filepath.Join(dir, model))
	if err != nil {
		t.Fatal(err)
	}
	if string(raw[:4]) != "WMZB" {
		return raw, -1
	}
	members, ids, err := specBundle(t, st, raw)
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	i := slices.Index(ids, [16]byte(file[32:48]))
	if i < 0 {
		t.Fatalf("%s names no member of %s", "the file", model)
	}
	return members[i], i
}

// 4. World model.

type specMember struct {
	ref  specRef
	mlw0 int64
}

type specGroup struct {
	cls     int
	tile    []int
	lw, lw0 int64
	mc      int
	members []specMember
	sum     uint64 // batch weights
}

type specSucc struct {
	store, r int
	cnt      uint64
}

type specEntry struct {
	tile  []int
	items [][2]int // (i, x)
	EF    uint64
}

type specPred struct {
	m                      *specModel
	hist                   [][]int
	histB                  []int
	t, b                   int
	EP                     []specRef
	hits                   [16][8]uint64
	hitsS                  [][8]uint64
	mis, cn                [8]uint64
	hitsP                  [][9][8]uint64
	anch                   []specSucc // anchors: store, r, count
	succ                   []specSucc
	u                      []uint64
	SU, SC                 uint64
	eps                    [8]uint64
	pc                     int
	CP                     []specRef
	cw                     []uint64
	sF                     []uint64
	sX                     [][]uint64 // per successor, per spike
	spd                    [][]int    // per successor, spike offsets
	entries                []*specEntry
	s, mm                  int
	prior                  [8]int64
	groups                 []*specGroup
	lwNew, lwSA, lwEp, lwD int64
	saLive, epLive, dLive  bool
	v0                     int
	// the prediction of the current coordinate
	commitRow []uint64
	top       int
	hit       uint64
	table     []uint64 // frequencies (one-step table or miss table)
	// the copy level (4.16)
	CC               [192][3]uint64
	po, ec           int
	cand             []*specGroup
	started, pending bool
}

func newSpecPred(m *specModel) *specPred { return &specPred{m: m} }

func (p *specPred) Reset() {
	m := p.m
	p.hist, p.histB, p.t = nil, nil, -1
	p.EP, p.anch, p.succ, p.CP, p.cw = nil, nil, nil, nil, nil
	p.hits, p.mis, p.cn = m.hits, m.mis, m.cn
	p.hitsS = slices.Clone(m.hitsS)
	p.hitsP = slices.Clone(m.hitsP)
	for i := range p.CC {
		p.CC[i] = [3]uint64{128, 32, 128}
	}
	p.po = 0
}

// SlotTable is 4.16.2: the frequencies of the slot event's table, or nil.
func (p *specPred) SlotTable() []uint64 {
	p.slotStart()
	p.started = true
	p.cand = nil
	for range 2 {
		var best *specGroup
		for _, g := range p.groups {
			if len(p.cand) == 1 && slices.Equal(g.tile, p.cand[0].tile) {
				continue
			}
			if best == nil || g.lw > best.lw {
				best = g
			}
		}
		if best == nil {
			break
		}
		p.cand = append(p.cand, best)
	}
	n := len(p.cand)
	if n == 0 {
		return nil
	}
	next := p.lwNew
	if n == 2 {
		next = max(next, p.cand[1].lw)
	}
	d, mb := p.cand[0].lw-next, 0
	for _, b := range []int64{-1536, 0, 768, 1280, 1536, 1792, 2048} {
		if b <= d {
			mb++
		}
	}
	p.ec = (8*p.cand[0].cls+mb)*3 + p.po
	cc := p.CC[p.ec]
	var cp uint64
	for e := range n {
		cp += cc[e]
	}
	if 5*cp < 4*(cc[0]+cc[1]+cc[2]) {
		p.pending = true
		return nil
	}
	return specQuantize(append(slices.Clone(cc[:n]), cc[2]), p.m.P)
}

// symbol is the event that codes tile: the first candidate with that tile,
// else the escape.
func (p *specPred) symbol(tile []int) int {
	for e, g := range p.cand {
		if slices.Equal(g.tile, tile) {
			return e
		}
	}
	return len(p.cand)
}

// count counts the outcome e of the slot's event (4.16.2).
func (p *specPred) count(e int) {
	k, n := 2, len(p.cand)
	if e < n {
		k = e
	}
	cc := &p.CC[p.ec]
	cc[k] += 32
	if cc[0]+cc[1]+cc[2] > 65536 {
		for i := range cc {
			cc[i] = (cc[i] + 1) >> 1
		}
	}
	p.po = 2
	if e < n {
		p.po = min(e, 1)
	}
}

// CommitSlot is 4.16.2's: it reports whether the slot was copied.
func (p *specPred) CommitSlot(e int) bool {
	p.count(e)
	if e == len(p.cand) {
		return false
	}
	g := p.cand[e]
	copy(p.hist[p.t][p.s*p.m.M:], g.tile)
	p.groups = slices.DeleteFunc(p.groups, func(h *specGroup) bool { return !slices.Equal(h.tile, g.tile) })
	p.lwNew = g.lw - 1<<20
	p.started = false
	p.endSlot(g.lw)
	p.s++
	p.mm = 0
	return true
}

func (p *specPred) stateCodes(store, r int) []int {
	if store == 1 {
		return p.hist[r]
	}
	return p.m.REF[r]
}

func (p *specPred) tile(rf specRef) []int { return p.m.tileOf(p.stateCodes(rf.store, rf.r), rf.x) }

func (p *specPred) Begin(act int64) {
	m := p.m
	if p.t >= 0 {
		p.successors()
	}
	p.t++
	p.b = 0
	if p.t > 0 {
		// min(max(act + 1, 0), 15) in exact arithmetic (act + 1 may not
		// fit 64 bits)
		p.b = int(min(max(act, -1), 14) + 1)
	}
	codes := make([]int, m.N)
	for j := range codes {
		codes[j] = -1
	}
	p.hist = append(p.hist, codes)
	p.histB = append(p.histB, p.b)
	p.anch, p.CP, p.cw = nil, nil, nil
	for c := range 8 {
		p.eps[c] = min(max(((p.mis[c]+1)<<16)/(p.cn[c]+2), 1), 32768)
	}
	p.u, p.SU, p.SC = nil, 0, 0
	for _, sc := range p.succ {
		bi := p.bucketOf(sc)
		u := sc.cnt
		if bi == p.b {
			u = 8 * sc.cnt
		}
		p.u = append(p.u, u)
		p.SU += u
		p.SC += sc.cnt
	}
	if len(p.succ) > 0 {
		p.layout()
	}
	p.s, p.mm, p.pc = 0, 0, 0
}

// bucketOf is the bucket of the state a successor names.
func (p *specPred) bucketOf(sc specSucc) int {
	if sc.store == 1 {
		return p.histB[sc.r]
	}
	return p.m.BKT[sc.r]
}

// successors is 4.8.
func (p *specPred) successors() {
	m := p.m
	a := slices.Clone(p.anch)
	slices.SortStableFunc(a, func(x, y specSucc) int {
		if x.cnt != y.cnt {
			if x.cnt > y.cnt {
				return -1
			}
			return 1
		}
		if x.store != y.store {
			return x.store - y.store
		}
		return x.r - y.r
	})
	p.succ = nil
	for _, an := range a {
		if len(p.succ) >= m.capAnc {
			break
		}
		if an.store == 1 && an.r+1 <= p.t {
			p.succ = append(p.succ, specSucc{1, an.r + 1, an.cnt})
		} else if an.store == 2 && m.next[an.r] >= 0 {
			p.succ = append(p.succ, specSucc{2, m.next[an.r], an.cnt})
		}
	}
	if m.version >= 2 {
		for _, an := range a {
			if len(p.succ) >= m.capSucc {
				break
			}
			if an.store == 1 && an.r >= 1 {
				p.succ = append(p.succ, specSucc{1, an.r - 1, an.cnt})
			} else if an.store == 2 && m.prev[an.r] >= 0 {
				p.succ = append(p.succ, specSucc{2, m.prev[an.r], an.cnt})
			}
		}
	}
}

// layout is 4.9.
func (p *specPred) layout() {
	m := p.m
	p.sF, p.sX, p.spd, p.entries = nil, nil, nil, nil
	for i, sc := range p.succ {
		if m.OFF != nil {
			row := p.b*16 + p.bucketOf(sc)
			rho := (sc.cnt << 16) / p.SC
			sF := rho * m.offFloor[row] >> 16
			var sx []uint64
			for k := range m.offD[row] {
				sx = append(sx, (rho*(m.offFloor[row]+m.offX[row][k])>>16)-sF)
			}
			p.sF, p.sX, p.spd = append(p.sF, sF), append(p.sX, sx), append(p.spd, m.offD[row])
		} else {
			p.sF = append(p.sF, (p.u[i]<<16)/(p.SU*uint64(m.S)))
			p.sX, p.spd = append(p.sX, nil), append(p.spd, nil)
		}
		for x := range m.S {
			tl := m.tileOf(p.stateCodes(sc.store, sc.r), x)
			var e *specEntry
			for _, en := range p.entries {
				if slices.Equal(en.tile, tl) {
					e = en
					break
				}
			}
			if e == nil {
				e = &specEntry{tile: tl}
				p.entries = append(p.entries, e)
			}
			e.items = append(e.items, [2]int{i, x})
			e.EF += p.sF[i]
		}
	}
}

// sa is sa_i(δ) of 4.9.
func (p *specPred) sa(i, d int) uint64 {
	for k, dk := range p.spd[i] {
		if dk == d {
			return p.sF[i] + p.sX[i][k]
		}
	}
	return p.sF[i]
}

// priors is 4.7.
func (p *specPred) priors() {
	st := p.m.st
	var allSum, rowSum, slotSum uint64
	for bk := range 16 {
		for c := range 8 {
			allSum += p.hits[bk][c]
		}
	}
	for c := range 8 {
		rowSum += p.hits[p.b][c]
		slotSum += p.hitsS[p.s][c]
	}
	pcs := 8
	if p.s > 0 {
		pcs = p.pc
	}
	for c := range 8 {
		var colSum uint64
		for bk := range 16 {
			colSum += p.hits[bk][c]
		}
		g16 := ((colSum + 1) << 16) / (allSum + 8)
		qb := ((p.hits[p.b][c] << 16) + 2*g16) / (rowSum + 2)
		q := ((p.hitsS[p.s][c] << 16) + 64*qb) / (slotSum + 64)
		if p.hitsP != nil {
			var ctxSum uint64
			for c2 := range 8 {
				ctxSum += p.hitsP[p.s][pcs][c2]
			}
			q = ((p.hitsP[p.s][pcs][c] << 16) + 4*q) / (ctxSum + 4)
		}
		p.prior[c] = st.lg(max(q, 1)) - 4096
	}
}

// batch forms the groups of 4.2 from candidates with weights.
func (p *specPred) batch(cls int, base int64, refs []specRef, w []uint64) {
	first := len(p.groups)
	for k, rf := range refs {
		tl := p.tile(rf)
		var g *specGroup
		for _, h := range p.groups[first:] {
			if slices.Equal(h.tile, tl) {
				g = h
				break
			}
		}
		if g == nil {
			g = &specGroup{cls: cls, tile: tl}
			p.groups = append(p.groups, g)
		}
		g.members = append(g.members, specMember{rf, base + p.m.st.lg(w[k])})
		g.sum += w[k]
	}
	for _, g := range p.groups[first:] {
		g.lw = base + p.m.st.lg(g.sum)
		g.lw0 = g.lw
	}
}

func (p *specPred) alone(cls int, rf specRef, l int64) {
	p.groups = append(p.groups, &specGroup{cls: cls, tile: p.tile(rf), lw: l, lw0: l, members: []specMember{{rf, l}}})
}

// slotStart is 4.10.
func (p *specPred) slotStart() {
	s := p.s
	p.priors()
	p.groups = nil
	if p.t >= 1 {
		p.alone(0, specRef{1, p.t - 1, s}, p.prior[0])
	}
	if p.t >= 2 {
		p.alone(1, specRef{1, p.t - 2, s}, p.prior[1])
	}
	if s > 0 && len(p.CP) > 0 {
		var CT uint64
		for _, w := range p.cw {
			CT += w
		}
		p.batch(2, p.prior[2]-p.m.st.lg(CT), p.CP, p.cw)
	}
	if len(p.succ) > 0 {
		var refs []specRef
		for _, sc := range p.succ {
			refs = append(refs, specRef{sc.store, sc.r, s})
		}
		p.batch(3, p.prior[3]-p.m.st.lg(p.SU), refs, p.u)
	}
	p.saLive, p.lwSA = len(p.succ) > 0, p.prior[4]
	p.epLive, p.lwEp = len(p.EP) > 0, p.prior[5]
	p.dLive, p.lwD = p.m.DCtot > 0, p.prior[6]
	p.lwNew = p.prior[7]
}

func (p *specPred) epV(v int) []specRef {
	var out []specRef
	for _, rf := range p.EP {
		if p.tile(rf)[0] == v {
			out = append(out, rf)
		}
	}
	return out
}

// Predict is 4.11. It returns top and hit (hit = 0 for a one-step
// prediction) and the table's frequencies.
func (p *specPred) Predict(j int) (int, uint64, []uint64) {
	m, st := p.m, p.m.st
	if p.mm == 0 && !p.started {
		p.slotStart()
	}
	p.started = false
	s, mm, K := p.s, p.mm, m.K
	ctx := 0
	if m.C1 > 1 {
		ctx = K
		if s > 0 {
			ctx = p.hist[p.t][j-m.M]
		}
	}
	f1 := m.FB1[mm*m.C1+ctx]
	fc := f1
	if m.C2 > 0 {
		ctx2 := K
		if mm > 0 {
			ctx2 = p.hist[p.t][j-1]
		}
		w := make([]uint64, K)
		for v := range w {
			w[v] = m.PW1[mm*m.C1+ctx][v] * m.PW2[mm*m.C2+ctx2][v] >> 8
		}
		fc = specQuantize(w, 16)
	}
	maxLW := p.lwNew
	for _, g := range p.groups {
		maxLW = max(maxLW, g.lw)
	}
	virt := false
	if mm == 0 && p.saLive {
		maxLW, virt = max(maxLW, p.lwSA), true
	}
	if mm <= 1 && p.epLive {
		maxLW, virt = max(maxLW, p.lwEp), true
	}
	if mm <= 1 && p.dLive {
		maxLW, virt = max(maxLW, p.lwD), true
	}
	wN := st.W(maxLW - p.lwNew)
	var wS, SP uint64
	acc := make([]uint64, K)
	has := make([]bool, K)
	for _, g := range p.groups {
		wg, eg := st.W(maxLW-g.lw), p.eps[g.cls]
		wS += wg * eg >> 16
		acc[g.tile[mm]] += wg * (65536 - eg)
		SP += wg * (65536 - eg)
		has[g.tile[mm]] = true
	}
	A := m.A
	alpha := wN<<8 + wS*A
	beta := wS * (256 - A) * (65536 / uint64(K))
	weights := func(f []uint64, vw []uint64) []uint64 {
		w := make([]uint64, K)
		var sum uint64
		for v := range w {
			w[v] = alpha*f[v] + beta + acc[v]<<8 + vw[v]<<8
			sum += w[v]
		}
		return w
	}
	scaled := func(w []uint64) []uint64 {
		var sum uint64
		for _, x := range w {
			sum += x
		}
		shift := 0
		for sum>>shift >= 1<<31 {
			shift++
		}
		q := make([]uint64, K)
		for v := range w {
			q[v] = w[v] >> shift
		}
		return specQuantize(q, m.P)
	}
	zero := make([]uint64, K)
	p.top, p.hit = -1, 0
	if !virt && len(p.groups) > 0 {
		top, best := -1, uint64(0)
		for v := range K {
			if !has[v] {
				continue
			}
			mass := alpha*f1[v] + acc[v]<<8 + beta
			if top < 0 || mass > best {
				top, best = v, mass
			}
		}
		tot := alpha<<16 + beta*uint64(K) + SP<<8
		if 2*best >= tot {
			num := new(big.Int).Lsh(new(big.Int).SetUint64(best), m.P)
			q := num.Div(num, new(big.Int).SetUint64(tot)).Uint64()
			p.top, p.hit = top, min(max(q, 1), uint64(1)<<m.P-1)
			w := weights(fc, zero)
			w[top] = 0
			p.table = scaled(w)
			p.commitRow = f1
			return p.top, p.hit, p.table
		}
	}
	p.commitRow = fc
	if !virt && len(p.groups) == 0 {
		if m.P == 16 {
			p.table = fc
		} else {
			p.table = specQuantize(fc, m.P)
		}
		return -1, 0, p.table
	}
	vw := make([]uint64, K)
	if mm == 0 && p.saLive {
		wsa := st.W(maxLW - p.lwSA)
		for _, e := range p.entries {
			vw[e.tile[0]] += wsa * e.EF
		}
		for i, sc := range p.succ {
			for k, dk := range p.spd[i] {
				x := (s + dk) % m.S
				vw[m.tileOf(p.stateCodes(sc.store, sc.r), x)[0]] += wsa * p.sX[i][k]
			}
		}
	}
	if p.epLive {
		we := st.W(maxLW - p.lwEp)
		if mm == 0 {
			ep0 := (we << 32) / uint64(len(p.EP))
			for v := range K {
				if n := len(p.epV(v)); n > 0 {
					vw[v] += ep0 * uint64(n) >> 16
				}
			}
		} else if mm == 1 {
			l := p.epV(p.v0)
			x := (we << 16) / uint64(len(l))
			for _, rf := range l {
				vw[p.tile(rf)[1]] += x
			}
		}
	}
	if p.dLive {
		wd := st.W(maxLW - p.lwD)
		if mm == 0 {
			dc0 := (wd << 32) / m.DCtot
			for v := range K {
				if m.DC[v] > 0 {
					vw[v] += dc0 * m.DC[v] >> 16
				}
			}
		} else if mm == 1 {
			dc1 := (wd << 32) / m.DC[p.v0]
			for _, pe := range m.pairs[p.v0] {
				vw[pe[0]] += dc1 * uint64(pe[1]) >> 16
			}
		}
	}
	p.table = scaled(weights(fc, vw))
	return -1, 0, p.table
}

// Commit is 4.12 and 4.13.
func (p *specPred) Commit(j, v int) {
	m, st := p.m, p.m.st
	s, mm := p.s, p.mm
	p.hist[p.t][j] = v
	fv := p.commitRow[v]
	p.lwNew += st.lg(fv) - 4096
	if len(p.groups) > 0 {
		qv := (fv*m.A + (65536/uint64(m.K))*(256-m.A)) >> 8
		for _, g := range p.groups {
			ec := p.eps[g.cls]
			if g.tile[mm] == v {
				g.lw += st.lg(65536-ec+(ec*qv>>16)) - 4096
			} else {
				g.lw += st.lg(max(1, ec*qv>>16)) - 4096
				g.mc++
			}
		}
	}
	if mm == 0 && p.saLive {
		for _, e := range p.entries {
			if e.tile[0] != v {
				continue
			}
			EX := e.EF
			for i := range p.succ {
				for k, dk := range p.spd[i] {
					if slices.Contains(e.items, [2]int{i, (s + dk) % m.S}) {
						EX += p.sX[i][k]
					}
				}
			}
			if EX == 0 {
				continue
			}
			l := p.lwSA - 4096 + st.lg(EX)
			g := &specGroup{cls: 4, tile: e.tile, lw: l, lw0: l}
			for _, it := range e.items {
				if a := p.sa(it[0], (it[1]-s+m.S)%m.S); a > 0 {
					sc := p.succ[it[0]]
					g.members = append(g.members, specMember{specRef{sc.store, sc.r, it[1]}, p.lwSA - 4096 + st.lg(a)})
				}
			}
			p.groups = append(p.groups, g)
		}
		p.saLive = false
	}
	if p.epLive {
		switch {
		case mm == 0 && m.M > 1 && len(p.epV(v)) > 0:
			p.lwEp += st.lg(uint64(len(p.epV(v)))) - st.lg(uint64(len(p.EP)))
			p.v0 = v
		case mm == 1:
			l := p.epV(p.v0)
			n := 0
			for k := len(l) - 1; k >= 0 && n < 256; k-- {
				if p.tile(l[k])[1] == v {
					p.alone(5, l[k], p.lwEp-st.lg(uint64(len(l))))
					n++
				}
			}
			p.epLive = false
		default:
			p.epLive = false
		}
	}
	if p.dLive {
		switch {
		case mm == 0 && m.M > 1 && m.DC[v] > 0:
			p.lwD += st.lg(m.DC[v]) - st.lg(m.DCtot)
			p.v0 = v
		case mm == 1:
			for _, pe := range m.pairs[p.v0] {
				if pe[0] != v {
					continue
				}
				for _, id := range m.DICT[p.v0][pe[2]:min(pe[3], pe[2]+1024)] {
					d := m.dict[id]
					p.alone(6, d.first, p.lwD-st.lg(m.DC[p.v0])+st.lg(uint64(d.count)))
				}
			}
			p.dLive = false
		default:
			p.dLive = false
		}
	}
	maxC := p.lwNew
	for _, g := range p.groups {
		maxC = max(maxC, g.lw)
	}
	p.groups = slices.DeleteFunc(p.groups, func(g *specGroup) bool { return maxC-g.lw > 5120 })
	if mm == m.M-1 {
		if p.pending {
			p.pending = false
			p.count(p.symbol(m.tileOf(p.hist[p.t], s)))
		}
		p.endSlot(maxC)
		p.s++
		p.mm = 0
	} else {
		p.mm++
	}
}

func (p *specPred) members(g *specGroup) []specMember {
	out := make([]specMember, len(g.members))
	for k, mb := range g.members {
		out[k] = specMember{mb.ref, mb.mlw0 + g.lw - g.lw0}
	}
	return out
}

// endSlot is 4.13.
func (p *specPred) endSlot(maxC int64) {
	m := p.m
	s := p.s
	c := 7
	var best *specGroup
	for _, g := range p.groups {
		if g.lw == maxC {
			best = g
			break
		}
	}
	if best != nil && 4*best.mc <= m.M && p.lwNew < maxC {
		c = best.cls
		p.mis[c] += uint64(best.mc)
		p.cn[c] += uint64(m.M)
		var bm specMember
		first := true
		for _, mb := range p.members(best) {
			if first || mb.mlw0 > bm.mlw0 {
				bm, first = mb, false
			}
		}
		add := func(store, r int) {
			for k := range p.anch {
				if p.anch[k].store == store && p.anch[k].r == r {
					p.anch[k].cnt++
					return
				}
			}
			p.anch = append(p.anch, specSucc{store, r, 1})
		}
		if bm.ref.store == 2 {
			tl := p.tile(bm.ref)
			for _, d := range m.dict {
				if slices.Equal(d.tile, tl) {
					for _, o := range d.occ {
						add(2, o.r)
					}
				}
			}
		} else {
			add(1, bm.ref.r)
		}
	}
	pcs := 8
	if s > 0 {
		pcs = p.pc
	}
	p.hits[p.b][c]++
	p.hitsS[s][c]++
	if p.hitsP != nil {
		p.hitsP[s][pcs][c]++
	}
	p.pc = c
	p.CP, p.cw = nil, nil
proposals:
	for _, g := range p.groups {
		if maxC-g.lw > 2048 || 4*g.mc > m.M {
			continue
		}
		for _, mb := range p.members(g) {
			if maxC-mb.mlw0 > 2048 || mb.mlw0 <= p.lwNew-2048 {
				continue
			}
			for _, yp := range m.CONT[mb.ref.x] {
				nr := specRef{mb.ref.store, mb.ref.r, yp[0]}
				if slices.Contains(p.CP, nr) || nr.store == 1 && nr.r == p.t && nr.x > s {
					continue
				}
				p.CP = append(p.CP, nr)
				p.cw = append(p.cw, max(1, m.st.W(maxC-mb.mlw0)*uint64(yp[1])>>15))
				if len(p.CP) == 8 {
					break proposals
				}
			}
		}
	}
	tl := m.tileOf(p.hist[p.t], s)
	for _, rf := range p.EP {
		if slices.Equal(p.tile(rf), tl) {
			return
		}
	}
	p.EP = append(p.EP, specRef{1, p.t, s})
}

// 5. Retention gate.

type specGate struct {
	st               *specTables
	axis, binShift   int
	binErr, coordErr []uint64
	weights          []uint64
	dist             [][]uint64
	N, M, K          int
	P                uint
}

// parseSpecGate reads the GATE section of a model file (5.1), or nil.
func parseSpecGate(st *specTables, raw []byte, sm *specModel) *specGate {
	le := binary.LittleEndian
	// The sections are the file's tail: find GATE from the start of the
	// sections, walking them from the count, which follows the buckets.
	i := bytesIndexSections(raw, sm)
	ns := int(le.Uint32(raw[i:]))
	i += 4
	for range ns {
		tag, n := string(raw[i:i+4]), int(le.Uint32(raw[i+4:]))
		d := raw[i+8 : i+8+n]
		i += 8 + n
		if tag != "GATE" {
			continue
		}
		g := &specGate{st: st, N: sm.N, M: sm.M, K: sm.K, P: sm.P}
		flags := le.Uint16(d[2:])
		g.binShift, g.axis = int(d[16]), int(d[18])
		bins := int(le.Uint32(d[20:]))
		p := 44
		for range bins {
			g.binErr = append(g.binErr, uint64(le.Uint32(d[p:])))
			p += 4
		}
		for range sm.N {
			g.coordErr = append(g.coordErr, uint64(le.Uint32(d[p:])))
			p += 4
		}
		if flags&2 != 0 {
			for range sm.N {
				g.weights = append(g.weights, uint64(le.Uint16(d[p:])))
				p += 2
			}
		}
		if flags&1 != 0 {
			tables := int(le.Uint32(d[p:]))
			p += 4
			for range tables {
				t := make([]uint64, sm.K*sm.K)
				for c := range t {
					t[c] = uint64(le.Uint16(d[p:]))
					p += 2
				}
				g.dist = append(g.dist, t)
			}
		}
		return g
	}
	return nil
}

// bytesIndexSections returns the offset of the section count, which
// parseSpecModel found after the reference store (3.1).
func bytesIndexSections(raw []byte, sm *specModel) int { return sm.sections }

// retain is 5.2 for coordinate j whose modal value v̂ has frequency F.
func (g *specGate) retain(j int, lambda uint64, vhat int, F uint64) bool {
	st := g.st
	P := uint64(g.P)
	R := uint64(1)<<g.P - F
	H := (F*uint64(256*P-uint64(st.lg(F))) + R*uint64(256*P-uint64(st.lg(R))+uint64(st.lg(uint64(g.K-1))))) >> g.P
	if H == 0 {
		return true
	}
	key := H
	if g.axis == 1 {
		key = uint64(st.lg(R))
	}
	bin := min(key>>g.binShift, uint64(len(g.binErr)-1))
	e := g.binErr[bin]
	if e == 0xFFFFFFFF {
		e = g.coordErr[j]
	}
	if e == 0 {
		return false
	}
	V := uint64(0xFFFF)
	if g.dist != nil {
		t := j % g.M
		if len(g.dist) == g.N {
			t = j
		}
		var sum uint64
		for c := range g.K {
			sum += g.dist[t][vhat*g.K+c]
		}
		V = sum / uint64(g.K-1)
	}
	w := uint64(256)
	if g.weights != nil {
		w = g.weights[j]
	}
	hi, lo := bits.Mul64(lambda*e, V*w)
	return hi != 0 || lo >= H<<48
}

// freqsOf turns a cumulative table of precision prec into frequencies.
func freqsOf(cum []uint16, prec uint) []uint64 {
	f := make([]uint64, len(cum))
	for v := range cum {
		if v+1 < len(cum) {
			f[v] = uint64(cum[v+1]) - uint64(cum[v])
		} else {
			f[v] = uint64(1)<<prec - uint64(cum[v])
		}
	}
	return f
}

// TestSpecReference runs the implementation above and package wm's
// predictor side by side over every conformance vector's model and input
// (the input is what both commit), and compares every prediction, table,
// modal value and, where the model has a gate, the retention decision at
// the vector's λs.
func TestSpecReference(t *testing.T) {
	st := loadSpecTables(t)
	dir := filepath.Join("..", "..", "testdata", "conformance")
	b, err := os.ReadFile(filepath.Join(dir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		File     string   `json:"file"`
		Input    string   `json:"input"`
		Model    string   `json:"model"`
		Keyframe int      `json:"keyframe_interval"`
		Lambda   uint32   `json:"lambda"`
		Levels   []uint32 `json:"levels"`
	}
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range vs {
		file, err := os.ReadFile(filepath.Join(dir, v.File))
		if err != nil {
			t.Fatal(err)
		}
		// A bundle's vector runs on the member its file names (3.6).
		raw, member := specVectorModel(t, st, dir, v.Model, file)
		key := fmt.Sprint(v.Model, member, v.Input, v.Keyframe, v.Lambda, v.Levels)
		if seen[key] {
			continue
		}
		seen[key] = true
		model, err := wm.UnmarshalModel(raw)
		if err != nil {
			t.Fatal(err)
		}
		if model.Level() == wm.LevelFast {
			continue // this implementation is the default level's and the copy level's (4.1–4.14, 4.16)
		}
		sm := parseSpecModel(t, st, raw)
		sg := parseSpecGate(st, raw, sm)
		var lambdas []uint32
		for _, l := range append([]uint32{v.Lambda}, v.Levels...) {
			if l != 0xFFFFFFFF {
				lambdas = append(lambdas, l)
			}
		}
		var rules []*gate.Rule
		if sg != nil {
			gp, err := gate.FromModel(model)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lambdas {
				rules = append(rules, gp.Rule(lambda.Lambda(l)))
			}
		}
		ib, err := os.ReadFile(filepath.Join(dir, v.Input))
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Episodes []struct {
				Actions []int64 `json:"actions"`
				Codes   []int   `json:"codes"`
			} `json:"episodes"`
		}
		if err := json.Unmarshal(ib, &in); err != nil {
			t.Fatal(err)
		}
		t.Run(v.File, func(t *testing.T) {
			p, q := model.NewPredictor(), newSpecPred(sm)
			n, prec := sm.N, sm.P
			coords := 0
			for e, ep := range in.Episodes {
				for k, a := range ep.Actions {
					if k%v.Keyframe == 0 {
						p.Reset()
						q.Reset()
					}
					p.Begin(a)
					q.Begin(a)
					for j := 0; j < n; j++ {
						if sm.copy && j%sm.M == 0 {
							tl := ep.Codes[k*n+j : k*n+j+sm.M]
							tab, qtab := p.SlotTable(j), q.SlotTable()
							if (tab == nil) != (qtab == nil) || tab != nil && !slices.Equal(freqsOf(tab, prec), qtab) {
								t.Fatalf("episode %d state %d slot %d: slot event table: wm %v, text %v", e, k, j/sm.M, tab, qtab)
							}
							if tab != nil {
								tile := make([]uint16, len(tl))
								for i, c := range tl {
									tile[i] = uint16(c)
								}
								sym, qsym := p.SlotSymbol(tile), q.symbol(tl)
								if sym != qsym {
									t.Fatalf("episode %d state %d slot %d: slot event %d, text %d", e, k, j/sm.M, sym, qsym)
								}
								if (p.CommitSlot(sym) != nil) != q.CommitSlot(qsym) {
									t.Fatalf("episode %d state %d slot %d: copies differ", e, k, j/sm.M)
								}
								if sym < len(qtab)-1 {
									coords += sm.M
									j += sm.M - 1
									continue
								}
							}
						}
						top, hit := p.Predict(j)
						qtop, qhit, qtab := q.Predict(j)
						tab := freqsOf(p.Table(), prec)
						if uint64(hit) != qhit || hit > 0 && int(top) != qtop || !slices.Equal(tab, qtab) {
							t.Fatalf("episode %d state %d coordinate %d: wm (top %d, hit %d, table %v), text (top %d, hit %d, table %v)",
								e, k, j, top, hit, tab, qtop, qhit, qtab)
						}
						modal := qtop
						if qhit == 0 {
							modal = 0
							for x := range qtab {
								if qtab[x] > qtab[modal] {
									modal = x
								}
							}
						}
						if int(p.Modal()) != modal {
							t.Fatalf("episode %d state %d coordinate %d: modal %d, text %d", e, k, j, p.Modal(), modal)
						}
						F := qhit
						if qhit == 0 {
							F = qtab[modal]
						}
						for i, r := range rules {
							if r.Retain(j, p) != sg.retain(j, uint64(lambdas[i]), modal, F) {
								t.Fatalf("episode %d state %d coordinate %d: the gate at λ %d decides otherwise than the text", e, k, j, lambdas[i])
							}
						}
						c := ep.Codes[k*n+j]
						p.Commit(j, uint16(c))
						q.Commit(j, c)
						coords++
					}
				}
			}
			t.Logf("%d coordinates agree, %d decisions of the gate", coords, coords*len(rules))
		})
	}
}

// TestSpecReferenceBundles checks 3.5 and 3.6 from the text alone: every
// vector's header names the model ID this implementation computes for
// its model (its canonical serialization), a bundle's vector the member
// vectors.json says it was written with (not the first, so that the
// choice is checked); and the rejection vectors of bundles (reject.json)
// are rejected with their class: bundles to load, and files given a
// bundle that names none of its members.
func TestSpecReferenceBundles(t *testing.T) {
	st := loadSpecTables(t)
	dir := filepath.Join("..", "..", "testdata", "conformance")
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var vs []struct {
		File   string `json:"file"`
		Model  string `json:"model"`
		Member int    `json:"member"`
	}
	if err := json.Unmarshal(read("vectors.json"), &vs); err != nil {
		t.Fatal(err)
	}
	ids := map[string][16]byte{} // by model file, or bundle and member
	bundles := 0
	for _, v := range vs {
		file := read(v.File)
		raw, member := specVectorModel(t, st, dir, v.Model, file)
		key := fmt.Sprint(v.Model, member)
		if _, ok := ids[key]; !ok {
			ids[key] = specModelID(t, st, raw)
		}
		if id := ids[key]; id != [16]byte(file[32:48]) {
			t.Errorf("%s: the header names model %x, the text's ID of %s is %x", v.File, file[32:48], v.Model, id)
		}
		if member >= 0 {
			bundles++
			if member != v.Member || member == 0 {
				t.Errorf("%s names member %d of %s, vectors.json %d (not the first)", v.File, member, v.Model, v.Member)
			}
		}
	}
	if bundles == 0 {
		t.Fatal("no vector of a bundle")
	}

	var rs []struct {
		Name    string `json:"name"`
		Check   string `json:"check"`
		Base    string `json:"base"`
		Patches []struct {
			At  int    `json:"at"`
			Del int    `json:"del"`
			Hex string `json:"hex"`
		} `json:"patches"`
		Prefixes bool   `json:"every_prefix"`
		Model    string `json:"model"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(read("reject.json"), &rs); err != nil {
		t.Fatal(err)
	}
	isBundle := func(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "WMZB" }
	ran := 0
	for _, r := range rs {
		switch {
		case r.Check == "model" && isBundle(read(r.Base)):
		case r.Check == "file" && r.Model != "" && isBundle(read(r.Model)):
		default:
			continue // not a bundle's
		}
		ran++
		t.Run(r.Name, func(t *testing.T) {
			base := read(r.Base)
			var inputs [][]byte
			if r.Prefixes {
				for n := range len(base) {
					inputs = append(inputs, base[:n])
				}
			} else {
				// Each patch replaces del bytes at an offset of base; they
				// come in order of offset.
				var b []byte
				at := 0
				for _, p := range r.Patches {
					x, err := hex.DecodeString(p.Hex)
					if err != nil || p.At < at || p.At+p.Del > len(base) {
						t.Fatalf("bad patch %+v", p)
					}
					b = append(append(b, base[at:p.At]...), x...)
					at = p.At + p.Del
				}
				inputs = append(inputs, append(b, base[at:]...))
			}
			for _, b := range inputs {
				var err error
				switch {
				case r.Check == "file":
					// This implementation decodes no file: it checks that
					// the header names no member, which is the mismatch.
					_, ids, berr := specBundle(t, st, read(r.Model))
					if berr != nil {
						t.Fatalf("%s: %v", r.Model, berr)
					}
					if len(b) >= 48 && slices.Contains(ids, [16]byte(b[32:48])) {
						t.Fatal("the file names a member of the bundle: a file this implementation does not decode")
					}
					err = &specReject{"model-mismatch", "the file names no member of the bundle"}
				case isBundle(b):
					_, _, err = specBundle(t, st, b)
				default:
					// Not a bundle by its magic: a model file (3.1).
					err = specCheckMember(t, st, b)
				}
				var sr *specReject
				if !errors.As(err, &sr) {
					t.Fatalf("%d bytes: accepted (%v), want %s", len(b), err, r.Error)
				}
				if sr.class != r.Error {
					t.Fatalf("%d bytes: %v, want %s", len(b), err, r.Error)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no rejection vector of a bundle")
	}
}
