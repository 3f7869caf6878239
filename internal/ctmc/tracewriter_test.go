package ctmc

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
)

func TestTraceWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	tw := NewTraceWriter(&buf)
	want := []Access{{0, 3}, {0, 3}, {2, 17}, {1 << 40, 0}, {7, 123456789}}
	for _, a := range want {
		tw.Access(a.Episode, a.Step)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if tw.Accesses() != int64(len(want)) {
		t.Errorf("Accesses = %d, want %d", tw.Accesses(), len(want))
	}
	got, err := ReadTrace(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %v, want %v", got, want)
	}

	// Appending to a trace: no second header.
	tw = AppendTraceWriter(&buf)
	tw.Access(5, 5)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err = ReadTrace(bytes.NewReader(buf.Bytes()))
	if err != nil || len(got) != len(want)+1 || got[len(want)] != (Access{5, 5}) {
		t.Fatalf("after append: %v, %v", got, err)
	}

	// An empty trace is a header alone.
	buf.Reset()
	if err := NewTraceWriter(&buf).Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTrace(&buf); err != nil || len(got) != 0 {
		t.Fatalf("empty trace: %v, %v", got, err)
	}
}

func TestTraceWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	tw := NewTraceWriter(&buf)
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range each {
				tw.Access(int64(g), int64(s))
			}
		}()
	}
	wg.Wait()
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("%d accesses, want %d", len(got), workers*each)
	}
	// Each worker's accesses appear whole and in its order.
	next := make([]int64, workers)
	for _, a := range got {
		if a.Step != next[a.Episode] {
			t.Fatalf("worker %d: step %d, want %d", a.Episode, a.Step, next[a.Episode])
		}
		next[a.Episode]++
	}
}

type failWriter struct{ after int }

var errDisk = errors.New("disk full")

func (f *failWriter) Write(b []byte) (int, error) {
	if f.after <= 0 {
		return 0, errDisk
	}
	f.after--
	return len(b), nil
}

func TestTraceWriterErrors(t *testing.T) {
	tw := NewTraceWriter(&failWriter{})
	tw.Access(1, 2)
	if err := tw.Flush(); !errors.Is(err, errDisk) {
		t.Errorf("Flush: %v, want %v", err, errDisk)
	}
	// The first error sticks.
	tw.Access(3, 4)
	if err := tw.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close: %v, want %v", err, errDisk)
	}

	// A large trace overflows the buffer: the error comes from Access and
	// is returned by Close.
	tw = NewTraceWriter(&failWriter{after: 1})
	for i := range 100000 {
		tw.Access(int64(i), int64(i))
	}
	if err := tw.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close after overflow: %v, want %v", err, errDisk)
	}

	var buf bytes.Buffer
	tw = NewTraceWriter(&buf)
	tw.Access(-1, 0)
	if err := tw.Close(); err == nil {
		t.Error("negative episode accepted")
	}

	buf.Reset()
	tw = NewTraceWriter(&buf)
	tw.Access(1, 1)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tw.Access(2, 2)
	if err := tw.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("access after Close: %v, want ErrClosed", err)
	}
	if got, _ := ReadTrace(&buf); !slices.Equal(got, []Access{{1, 1}}) {
		t.Errorf("trace %v", got)
	}
}
