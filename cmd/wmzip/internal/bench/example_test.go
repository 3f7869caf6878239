package bench_test

import (
	"log"
	"os"

	"github.com/wmzip/wmzip/cmd/wmzip/internal/bench"
)

// The speed table of wmzip and the general-purpose compressors on the
// default graphworld, through its codes (no quantizer, so no lossy rows).
func ExampleSpeed() {
	train, test, err := bench.Graphworld(false)
	if err != nil {
		log.Fatal(err)
	}
	s, err := bench.Prepare("graphworld", train, test, bench.SetupOptions{})
	if err != nil {
		log.Fatal(err)
	}
	rep, err := bench.Speed(s, bench.SpeedOptions{Reads: 100})
	if err != nil {
		log.Fatal(err)
	}
	rep.WriteText(os.Stdout)
}
