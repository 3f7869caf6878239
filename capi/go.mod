module github.com/wmzip/wmzip/capi

go 1.26.0

require github.com/wmzip/wmzip v0.0.0

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	github.com/viterin/vek v0.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/exp v0.0.0-20230817173708-d852ddb80c63 // indirect
	golang.org/x/sys v0.50.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/wmzip/wmzip => ../
