package wm

// Levels of a model: how its predictor works, recorded in the model file
// (SPEC.md 3.1, the flags of version 4) and in its ID.
//
// The pipeline (package train, `wmzip train`) trains LevelCopy unless told
// otherwise; wm.Train's zero TrainOptions.Level is LevelFull.
const (
	LevelFull = 0 // every slot predicted coordinate by coordinate (SPEC.md 4.1–4.14)
	LevelFast = 1 // few hypotheses: slots copied whole or coded against one match (4.15)
	LevelCopy = 2 // the full level, with whole slots copied where copies have paid (4.16)
)

var levelNames = [...]string{LevelFull: "full", LevelFast: "fast", LevelCopy: "copy"}

// LevelName returns the name of level l as `wmzip train --level` takes
// it: "full", "fast" or "copy"; "" if l is no level.
func LevelName(l int) string {
	if !validLevel(l) {
		return ""
	}
	return levelNames[l]
}

// ParseLevel returns the level called name (LevelName's), and false if
// no level is.
func ParseLevel(name string) (int, bool) {
	for l, n := range levelNames {
		if n == name {
			return l, true
		}
	}
	return 0, false
}

func validLevel(l int) bool { return l >= 0 && l < len(levelNames) }
