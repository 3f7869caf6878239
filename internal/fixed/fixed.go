// Package fixed holds the fixed-point functions of SPEC.md 1.4, shared by
// the world model (wm), the retention gate (gate) and the container
// (format): lg, W and log2fix, and the tables LOG2FRAC and EXP2NEG they
// read. Every function is normative: a change here changes files.
package fixed

import (
	"math/bits"
	"sync"
)

// log2Frac is LOG2FRAC: log2Frac[i] = round(256·log2(1 + i/256)).
var log2Frac = [256]int32{
	0, 1, 3, 4, 6, 7, 9, 10, 11, 13, 14, 16, 17, 18, 20, 21,
	22, 24, 25, 26, 28, 29, 30, 32, 33, 34, 36, 37, 38, 40, 41, 42,
	44, 45, 46, 47, 49, 50, 51, 52, 54, 55, 56, 57, 59, 60, 61, 62,
	63, 65, 66, 67, 68, 69, 71, 72, 73, 74, 75, 77, 78, 79, 80, 81,
	82, 84, 85, 86, 87, 88, 89, 90, 92, 93, 94, 95, 96, 97, 98, 99,
	100, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 116, 117,
	118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133,
	134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149,
	150, 151, 152, 153, 154, 155, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164,
	165, 166, 167, 168, 169, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 178,
	179, 180, 181, 182, 183, 184, 185, 185, 186, 187, 188, 189, 190, 191, 192, 192,
	193, 194, 195, 196, 197, 198, 198, 199, 200, 201, 202, 203, 203, 204, 205, 206,
	207, 208, 208, 209, 210, 211, 212, 212, 213, 214, 215, 216, 216, 217, 218, 219,
	220, 220, 221, 222, 223, 224, 224, 225, 226, 227, 228, 228, 229, 230, 231, 231,
	232, 233, 234, 234, 235, 236, 237, 238, 238, 239, 240, 241, 241, 242, 243, 244,
	244, 245, 246, 247, 247, 248, 249, 249, 250, 251, 252, 252, 253, 254, 255, 255,
}

// exp2Neg is EXP2NEG: exp2Neg[i] = round(65536·2^(−i/256)).
var exp2Neg = [256]uint32{
	65536, 65359, 65182, 65006, 64830, 64655, 64480, 64306, 64132, 63958, 63785, 63613, 63441, 63269, 63098, 62928,
	62757, 62588, 62419, 62250, 62081, 61914, 61746, 61579, 61413, 61247, 61081, 60916, 60751, 60587, 60423, 60260,
	60097, 59934, 59772, 59611, 59449, 59289, 59128, 58968, 58809, 58650, 58491, 58333, 58176, 58018, 57861, 57705,
	57549, 57393, 57238, 57083, 56929, 56775, 56622, 56468, 56316, 56163, 56012, 55860, 55709, 55558, 55408, 55258,
	55109, 54960, 54811, 54663, 54515, 54368, 54221, 54074, 53928, 53782, 53637, 53492, 53347, 53203, 53059, 52916,
	52773, 52630, 52488, 52346, 52204, 52063, 51922, 51782, 51642, 51502, 51363, 51224, 51085, 50947, 50810, 50672,
	50535, 50399, 50262, 50126, 49991, 49856, 49721, 49586, 49452, 49319, 49185, 49052, 48920, 48787, 48655, 48524,
	48393, 48262, 48131, 48001, 47871, 47742, 47613, 47484, 47356, 47228, 47100, 46973, 46846, 46719, 46593, 46467,
	46341, 46216, 46091, 45966, 45842, 45718, 45594, 45471, 45348, 45225, 45103, 44981, 44859, 44738, 44617, 44497,
	44376, 44256, 44137, 44017, 43898, 43780, 43661, 43543, 43425, 43308, 43191, 43074, 42958, 42841, 42726, 42610,
	42495, 42380, 42265, 42151, 42037, 41923, 41810, 41697, 41584, 41472, 41360, 41248, 41136, 41025, 40914, 40804,
	40693, 40583, 40473, 40364, 40255, 40146, 40037, 39929, 39821, 39714, 39606, 39499, 39392, 39286, 39180, 39074,
	38968, 38863, 38757, 38653, 38548, 38444, 38340, 38236, 38133, 38030, 37927, 37824, 37722, 37620, 37518, 37417,
	37316, 37215, 37114, 37014, 36914, 36814, 36715, 36615, 36516, 36417, 36319, 36221, 36123, 36025, 35928, 35831,
	35734, 35637, 35541, 35445, 35349, 35253, 35158, 35063, 34968, 34874, 34779, 34685, 34591, 34498, 34405, 34312,
	34219, 34126, 34034, 33942, 33850, 33759, 33667, 33576, 33486, 33395, 33305, 33215, 33125, 33035, 32946, 32857,
}

// Lg is lg(x), log2(x) in units of 1/256 bit by the table LOG2FRAC:
// 256·e + LOG2FRAC[the 8 bits below the leading one], e the position of
// the leading one; Lg(0) = Lg(1) = 0.
func Lg(x uint64) int32 {
	if x <= 1 {
		return 0
	}
	e := 63 - bits.LeadingZeros64(x)
	var frac uint64
	if e >= 8 {
		frac = (x >> (uint(e) - 8)) & 0xFF
	} else {
		frac = (x << (8 - uint(e))) & 0xFF
	}
	return int32(e)*256 + log2Frac[frac]
}

// W is W(d), the weight of a hypothesis d units of 1/256 bit below the
// best, in units of 2^−16: EXP2NEG[d mod 256] >> ⌊d/256⌋, a negative d
// read as 0, and 0 once the shift reaches 30.
func W(d int32) uint64 {
	if d < 0 {
		d = 0
	}
	sh := d >> 8
	if sh >= 30 {
		return 0
	}
	return uint64(exp2Neg[d&255]) >> uint(sh)
}

// Log2Fix is log2fix(x), ⌊log2(x)·2^16⌋ for x ≥ 1, by repeated squaring
// of the mantissa in Q1.31: each squaring yields one fractional bit.
// The specification needs it for x ≤ 2^16; larger x keep the mantissa's
// top 32 bits.
func Log2Fix(x uint64) uint32 {
	n := uint(bits.Len64(x) - 1)
	var y uint64 // x / 2^n in Q1.31, in [2^31, 2^32)
	if n <= 31 {
		y = x << (31 - n)
	} else {
		y = x >> (n - 31)
	}
	r := uint32(n) << 16
	for i := 15; i >= 0; i-- {
		y = y * y >> 31
		if y >= 1<<32 {
			y >>= 1
			r |= 1 << uint(i)
		}
	}
	return r
}

// CostFrac is the number of fractional bits of a Cost.
const CostFrac = 16

var (
	costOnce sync.Once
	// costFracs[m − 2^15] is the fraction of Log2Fix(m) for every 16-bit
	// mantissa m in [2^15, 2^16): Log2Fix of any f ≤ 2^16 is its exponent
	// above that fraction, f normalized to 16 bits being exact. 64 KiB,
	// where a table of every f took 256.
	costFracs []uint16
)

// InitCost fills the table of Cost; users call it before the first Cost.
func InitCost() {
	costOnce.Do(func() {
		costFracs = make([]uint16, 1<<15)
		for i := range costFracs {
			costFracs[i] = uint16(Log2Fix(uint64(1<<15 + i)))
		}
	})
}

// Cost returns −log2(freq / 2^precision) in units of 2^−16 bit, the
// ideal code length of a symbol of frequency freq, for 1 ≤ freq ≤ 2^16
// (after InitCost). The ideal code lengths a file's index records are sums
// of Costs: integers, so that they are the same on every machine.
func Cost(freq uint32, precision uint) uint64 {
	n := uint(bits.Len32(freq) - 1)
	m := freq << 15 >> n // freq's 16-bit mantissa, exactly
	return uint64(precision)<<CostFrac - (uint64(n)<<CostFrac + uint64(costFracs[(m-1<<15)&(1<<15-1)]))
}
