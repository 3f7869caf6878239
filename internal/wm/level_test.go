package wm

import "testing"

// TestLevelNames: every level has a name that parses back to it; other
// numbers and names are none.
func TestLevelNames(t *testing.T) {
	for _, l := range []int{LevelFull, LevelFast, LevelCopy} {
		n := LevelName(l)
		if got, ok := ParseLevel(n); n == "" || !ok || got != l {
			t.Errorf("level %d: name %q parses to %d, %v", l, n, got, ok)
		}
	}
	if LevelName(-1) != "" || LevelName(3) != "" {
		t.Error("a name for a level that does not exist")
	}
	if _, ok := ParseLevel("slow"); ok {
		t.Error("an unknown name parsed")
	}
}
