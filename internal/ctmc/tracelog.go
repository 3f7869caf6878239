package ctmc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// OpenTraceLog opens the access trace at path for appending, creating it
// with TraceHeader when it is missing or empty; an existing trace must
// begin with the header. The caller closes the TraceWriter, then the file.
func OpenTraceLog(path string) (*TraceWriter, *os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if st.Size() == 0 {
		return NewTraceWriter(f), f, nil
	}
	// The first line that is neither blank nor a comment must be the header.
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, st.Size()))
	first := ""
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && l[0] != '#' {
			first = strings.TrimRight(sc.Text(), "\r")
			break
		}
	}
	if first != TraceHeader {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not an access trace (its first line is not %q)", path, TraceHeader)
	}
	tw := AppendTraceWriter(f)
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err == nil && last[0] != '\n' {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return tw, f, nil
}
