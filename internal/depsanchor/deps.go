package depsanchor
import (
 _ "github.com/klauspost/compress/zstd"
 _ "github.com/klauspost/compress/fse"
 _ "github.com/klauspost/compress/huff0"
 _ "github.com/klauspost/compress/s2"
 _ "github.com/google/go-cmp/cmp"
 _ "github.com/viterin/vek"
 _ "gonum.org/v1/gonum/mat"
 _ "gonum.org/v1/plot"
 _ "github.com/schollz/progressbar/v3"
 _ "codeberg.org/sbinet/npyio"
 _ "golang.org/x/sys/cpu"
 _ "golang.org/x/term"
)

