package baseline

import (
	"encoding/binary"
	"fmt"
)

// Stats are the repetition statistics a model builder needs: how often a
// tile (a run of Tile consecutive codes of a state, such as one slot's M
// subspace codes) or a whole state repeats something already seen. Every
// fraction is over all test tiles or all test states, including those of an
// episode's first state, which can only match train.
type Stats struct {
	States, Tiles int // test states, and test tiles (States × N/Tile)
	Tile          int // codes per tile

	// CodeSamePrev is the fraction of codes equal to the same coordinate of
	// the previous state of the episode.
	CodeSamePrev float64
	// TileSamePrev is the fraction of tiles identical to the same slot of
	// the previous state of the episode.
	TileSamePrev float64
	// TileEarlierState is the fraction of tiles identical to some tile, at any
	// slot, of an earlier state of the episode.
	TileEarlierState float64
	// TileEarlier also counts earlier tiles of the same state: what a
	// decoder working tile by tile has already reconstructed.
	TileEarlier float64
	// TileInTrain is the fraction of tiles identical to some training tile
	// at any slot; TileInTrainSameSlot requires the same slot.
	TileInTrain, TileInTrainSameSlot float64
	// TileSeen is the fraction of tiles found earlier in the episode (as in
	// TileEarlier) or in train; 1 − TileSeen is the novel content.
	TileSeen float64
	// StateEarlier is the fraction of states identical to an earlier state
	// of the episode; StateInTrain to some training state.
	StateEarlier, StateInTrain float64
	// DistinctTiles is the number of distinct tiles among the test tiles.
	DistinctTiles int
}

// key is a tile's or state's codes as a map key.
func key(codes []uint16) string {
	return string(pack(codes, MaxK))
}

// Measure computes Stats for in.Codes, cut into tiles of tile codes (tile
// must divide N), against in.Train and in.EpisodeStart.
func Measure(in Input, tile int) (Stats, error) {
	t, ttrain, err := in.validate()
	if err != nil {
		return Stats{}, err
	}
	n := in.N
	if tile <= 0 || n%tile != 0 {
		return Stats{}, fmt.Errorf("%w: tile %d does not divide N = %d", ErrInput, tile, n)
	}
	slots := n / tile
	st := Stats{States: t, Tiles: t * slots, Tile: tile}

	trainTiles := make(map[string]bool)
	trainSlot := make(map[string]bool) // key is slot byte + tile
	trainStates := make(map[string]bool)
	for s := range ttrain {
		state := in.Train[s*n : (s+1)*n]
		trainStates[key(state)] = true
		for j := range slots {
			k := key(state[j*tile : (j+1)*tile])
			trainTiles[k] = true
			trainSlot[slotKey(j, k)] = true
		}
	}

	first := in.episodeFirst(t)
	var epTiles, epStates map[string]bool
	distinct := make(map[string]bool)
	var codeSame, codeAll int64
	var samePrev, earlierState, earlier, inTrain, inTrainSlot, seen, stateEarlier, stateInTrain int
	for s := range t {
		if first[s] {
			epTiles, epStates = make(map[string]bool), make(map[string]bool)
		}
		state := in.Codes[s*n : (s+1)*n]
		var prev []uint16
		if !first[s] {
			prev = in.Codes[(s-1)*n : s*n]
			for i, v := range state {
				if v == prev[i] {
					codeSame++
				}
			}
			codeAll += int64(n)
		}
		sk := key(state)
		if epStates[sk] {
			stateEarlier++
		}
		if trainStates[sk] {
			stateInTrain++
		}
		fresh := make(map[string]bool, slots) // this state's tiles, added to the episode after it
		for j := range slots {
			tl := state[j*tile : (j+1)*tile]
			k := key(tl)
			distinct[k] = true
			if prev != nil && k == key(prev[j*tile:(j+1)*tile]) {
				samePrev++
			}
			inEp := epTiles[k]
			if inEp {
				earlierState++
			}
			if inEp || fresh[k] {
				earlier++
				inEp = true
			}
			if trainTiles[k] {
				inTrain++
			}
			if trainSlot[slotKey(j, k)] {
				inTrainSlot++
			}
			if inEp || trainTiles[k] {
				seen++
			}
			fresh[k] = true
		}
		for k := range fresh {
			epTiles[k] = true
		}
		epStates[sk] = true
	}

	tiles, states := float64(st.Tiles), float64(t)
	if codeAll > 0 {
		st.CodeSamePrev = float64(codeSame) / float64(codeAll)
	}
	st.TileSamePrev = float64(samePrev) / tiles
	st.TileEarlierState = float64(earlierState) / tiles
	st.TileEarlier = float64(earlier) / tiles
	st.TileInTrain = float64(inTrain) / tiles
	st.TileInTrainSameSlot = float64(inTrainSlot) / tiles
	st.TileSeen = float64(seen) / tiles
	st.StateEarlier = float64(stateEarlier) / states
	st.StateInTrain = float64(stateInTrain) / states
	st.DistinctTiles = len(distinct)
	return st, nil
}

// slotKey prefixes a tile key with its slot.
func slotKey(slot int, k string) string {
	return string(binary.LittleEndian.AppendUint32(nil, uint32(slot))) + k
}
