package format_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/wmzip/wmzip/format"
	"github.com/wmzip/wmzip/wm"
)

func Example() {
	g := wm.Geometry{S: 2, M: 2, K: 4}
	states := []wm.Episode{{
		Codes:   []uint16{0, 1, 2, 3, 0, 1, 2, 2, 0, 1, 3, 3},
		Actions: []int64{wm.NoAction, 2, 5},
	}}
	model, err := wm.Train(g, states, wm.TrainOptions{Precision: 12})
	if err != nil {
		log.Fatal(err)
	}

	var file bytes.Buffer
	w, err := format.NewWriter(&file, model, format.WithEmbeddedModel(true), format.WithKeyframeInterval(2))
	if err != nil {
		log.Fatal(err)
	}
	w.WriteEpisode([]byte(`{"task":"demo"}`))
	for t, a := range states[0].Actions {
		w.WriteState(a, states[0].Codes[t*4:(t+1)*4])
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Sequential decoding; the model is embedded, so none is passed.
	r, err := format.NewReader(bytes.NewReader(file.Bytes()), nil)
	if err != nil {
		log.Fatal(err)
	}
	meta, _ := r.NextEpisode()
	fmt.Printf("%s\n", meta)
	for {
		a, codes, err := r.ReadState(nil)
		if err == io.EOF {
			break
		}
		fmt.Println(a, codes)
	}

	// Random access.
	f, err := format.Open(bytes.NewReader(file.Bytes()), int64(file.Len()), nil)
	if err != nil {
		log.Fatal(err)
	}
	codes, _ := f.State(0, 2)
	fmt.Println(f.Episodes(), f.EpisodeLen(0), codes)
	// Output:
	// {"task":"demo"}
	// -1 [0 1 2 3]
	// 2 [0 1 2 2]
	// 5 [0 1 3 3]
	// 1 3 [0 1 3 3]
}
