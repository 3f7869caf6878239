package npz

import (
	"fmt"
	"strings"
)

// dtype describes one supported element type.
type dtype struct {
	name   string // Array.Dtype, numpy's dtype name
	descr  string // numpy type string written to headers
	size   int    // bytes per element in the file
	goSize int    // bytes per element in memory (float16 decodes to float32)
}

var dtypes = []dtype{
	{"float32", "<f4", 4, 4},
	{"float16", "<f2", 2, 4},
	{"float64", "<f8", 8, 8},
	{"uint8", "|u1", 1, 1},
	{"uint16", "<u2", 2, 2},
	{"int32", "<i4", 4, 4},
	{"int64", "<i8", 8, 8},
}

// Dtypes lists the supported dtype names, in the order used in messages.
func Dtypes() []string {
	names := make([]string, len(dtypes))
	for i, d := range dtypes {
		names[i] = d.name
	}
	return names
}

func dtypeByName(name string) (dtype, bool) {
	for _, d := range dtypes {
		if d.name == name {
			return d, true
		}
	}
	return dtype{}, false
}

// dtypeByDescr maps a header's type string to a supported dtype. On failure
// it returns a message for an ErrUnsupported error.
func dtypeByDescr(descr string) (dtype, string) {
	if descr == "<u1" { // numpy writes "|u1", but '<' is as good for one byte
		descr = "|u1"
	}
	for _, d := range dtypes {
		if d.descr == descr {
			return d, ""
		}
	}
	if len(descr) >= 2 {
		switch order, kind := descr[0], descr[1:]; {
		case strings.ContainsRune(descr, 'O'):
			return dtype{}, fmt.Sprintf("has object dtype %q (pickled Python objects), which is not supported", descr)
		case order == '>' || order == '!':
			for _, d := range dtypes {
				if d.descr[1:] == kind {
					return dtype{}, fmt.Sprintf("has big-endian dtype %q, which is not supported", descr)
				}
			}
		}
	}
	return dtype{}, fmt.Sprintf("has dtype %q, which is not supported (want little-endian %s)",
		descr, strings.Join(Dtypes(), ", "))
}
