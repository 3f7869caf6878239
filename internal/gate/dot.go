package gate

// dotRows sets out[i] to E(idx[i]) = Σ_v f_v · d[idx[i]·K + v], f_v the
// frequencies of the cumulative table cum (K entries) at precision prec
// and d a K×K distance table: the expected distances of the values idx
// under the table (SPEC.md 5.2, step 3), exact as they are below 2^32. The
// frequencies are found once for all rows. The values are below K (the
// kernel reads row c mod 64).
func dotRows(cum []uint16, prec uint, d []uint16, idx []uint16, out []uint32) {
	if useAVX2 && len(cum) == 64 && len(d) >= 64*64 && len(idx) > 0 && len(out) >= len(idx) {
		dotRows64AVX2(&cum[0], uint32(1)<<prec, &d[0], &idx[0], len(idx), &out[0])
		return
	}
	dotRowsGo(cum, uint32(1)<<prec, d, idx, out)
}

// dotRowsGo is dotRows in Go, the frequencies ending at top = 2^P (as
// rans.Dots, modulo 2^32).
func dotRowsGo(cum []uint16, top uint32, d []uint16, idx []uint16, out []uint32) {
	K := len(cum)
	out = out[:len(idx)]
	for i, c := range idx {
		row := d[int(c)*K : (int(c)+1)*K]
		var e uint32
		for v := 0; v+1 < K; v++ {
			e += (uint32(cum[v+1]) - uint32(cum[v])) * uint32(row[v])
		}
		out[i] = e + (top-uint32(cum[K-1]))*uint32(row[K-1])
	}
}

// allValues are the values 0 … 63, the rows of a 64-value table.
var allValues = func() (a [64]uint16) {
	for i := range a {
		a[i] = uint16(i)
	}
	return a
}()
