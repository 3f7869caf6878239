package main

import (
	"fmt"
	"math"

	"github.com/wmzip/wmzip/internal/wm"
)

// Flag values that cannot work are refused when the flags are parsed,
// before any work, with the flag, the value given and what it takes.

// flagChecks are the checks parse runs on the verb's flags once they
// are parsed; newFlags resets them.
var flagChecks []func() error

// checkInt refuses values of the int flag name (with p its variable)
// outside [lo, hi]; want says what the flag takes.
func checkInt(name string, p *int, lo, hi int, want string) {
	flagChecks = append(flagChecks, func() error {
		if *p < lo || *p > hi {
			return fmt.Errorf("--%s %d: want %s", name, *p, want)
		}
		return nil
	})
}

// checkFloat refuses values of the float flag name for which ok is false
// (NaN and infinities always).
func checkFloat(name string, p *float64, ok func(float64) bool, want string) {
	flagChecks = append(flagChecks, func() error {
		if math.IsNaN(*p) || math.IsInf(*p, 0) || !ok(*p) {
			return fmt.Errorf("--%s %v: want %s", name, *p, want)
		}
		return nil
	})
}

// runFlagChecks runs the checks of the verb's flags.
func runFlagChecks() error {
	for _, c := range flagChecks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// checkTrainFlags checks the flags of train (also used by bench verbs
// that train).
func checkTrainFlags(prec *uint, maxRef, maxStates *int, capacity *float64, alpha, gateHold, subspaces, centroids *int) {
	flagChecks = append(flagChecks, func() error {
		if *prec < 10 || *prec > 16 {
			return fmt.Errorf("--precision %d: want 10 to 16 bits", *prec)
		}
		return nil
	})
	checkInt("max-ref", maxRef, 0, wm.MaxRefStates, fmt.Sprintf("0 to %d reference states (0: 65,536)", wm.MaxRefStates))
	checkInt("max-states", maxStates, 0, math.MaxInt, "a number of states ≥ 0 (0: the default)")
	checkFloat("capacity", capacity, func(c float64) bool { return c > 0 && c <= 1 }, "a fraction in (0, 1]")
	checkInt("alphabet", alpha, 0, 1<<16, "K from 2 to 65536, or 0 (from the codes)")
	checkInt("gate-holdout", gateHold, -1, math.MaxInt32, "a number of episodes ≥ 0, or -1 (one in eight)")
	checkInt("subspaces", subspaces, 1, 4096, "1 to 4096 subspaces")
	checkInt("centroids", centroids, 2, 1<<16, "2 to 65536 centroids")
}
