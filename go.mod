module github.com/wmzip/wmzip

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
	github.com/viterin/vek v0.4.3
	golang.org/x/crypto v0.57.0
	golang.org/x/sys v0.50.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	golang.org/x/exp v0.0.0-20230817173708-d852ddb80c63 // indirect
)
