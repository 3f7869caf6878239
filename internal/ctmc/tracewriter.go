package ctmc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// ErrClosed is returned for accesses recorded after TraceWriter.Close.
var ErrClosed = errors.New("ctmc: trace writer closed")

// TraceWriter writes an access trace in the format of the package
// documentation: the header line, then one "episode<TAB>step" line per
// access. It is safe for concurrent use; lines of concurrent accesses never
// interleave. Output is buffered: Flush or Close writes it out. The first
// error (of the wrapped writer, or a negative episode or step) is kept, and
// every later access is dropped; Flush and Close return it.
//
// Its Access method has the signature of format.WithAccessLog, so a
// format.File records what it returns with
//
//	tw := ctmc.NewTraceWriter(f)
//	file, err := format.Open(r, size, model, format.WithAccessLog(tw.Access))
type TraceWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	n      int64
	err    error
	closed bool
}

// NewTraceWriter returns a TraceWriter on w that begins with TraceHeader.
func NewTraceWriter(w io.Writer) *TraceWriter {
	t := AppendTraceWriter(w)
	t.w.WriteString(TraceHeader + "\n")
	return t
}

// AppendTraceWriter returns a TraceWriter on w that writes access lines
// only: for continuing a trace whose header is already written (an access
// log opened for appending).
func AppendTraceWriter(w io.Writer) *TraceWriter {
	return &TraceWriter{w: bufio.NewWriterSize(w, 32<<10)}
}

// Access records one access to the state stored at (episode, step).
func (t *TraceWriter) Access(episode, step int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.err != nil:
		return
	case t.closed:
		t.err = ErrClosed
		return
	case episode < 0 || step < 0:
		t.err = fmt.Errorf("ctmc: access to episode %d, step %d: negative", episode, step)
		return
	}
	var b [48]byte
	line := strconv.AppendInt(b[:0], episode, 10)
	line = append(line, '\t')
	line = strconv.AppendInt(line, step, 10)
	line = append(line, '\n')
	if _, err := t.w.Write(line); err != nil {
		t.err = err
		return
	}
	t.n++
}

// Accesses returns the number of accesses recorded (written or buffered).
func (t *TraceWriter) Accesses() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Flush writes the buffered lines to the wrapped writer and returns the
// first error so far.
func (t *TraceWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flush()
}

func (t *TraceWriter) flush() error {
	if t.err != nil {
		return t.err
	}
	if err := t.w.Flush(); err != nil {
		t.err = err
	}
	return t.err
}

// Close flushes and ends the trace: later accesses are dropped and make
// Flush and Close return ErrClosed. Like gzip.Writer's, it does not close the
// wrapped writer. It returns the first error.
func (t *TraceWriter) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.err
	}
	err := t.flush()
	t.closed = true
	return err
}
