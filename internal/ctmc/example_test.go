package ctmc_test

import (
	"fmt"
	"log"

	"github.com/wmzip/wmzip/internal/ctmc"
)

// Audit: is an access trace heavy-tailed enough for storage by access to
// pay?
func ExampleAudit() {
	counts := make([]int64, 200)
	for i := range counts {
		counts[i] = int64(1000 / (i + 1)) // a Zipf-like trace
	}
	rep, err := ctmc.Audit(counts, ctmc.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Gini %.2f, top-10%% share %.2f\n", rep.Concentration.Gini, rep.Concentration.Top10Share)
	// Output: Gini 0.68, top-10% share 0.62
}
