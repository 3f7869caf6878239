package depsanchor

import (
	_ "codeberg.org/sbinet/npyio"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/klauspost/compress/fse"
	_ "github.com/klauspost/compress/huff0"
	_ "github.com/klauspost/compress/s2"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/viterin/vek"
	_ "golang.org/x/sys/cpu"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
)
