package capi

import (
	"fmt"
	"sync"
)

// A Handle names an object of the table: what C holds instead of a Go
// pointer. 0 names nothing; a handle is never reused after it is
// released.
type Handle uint64

// table maps live handles to their objects.
var table = struct {
	sync.RWMutex
	last Handle
	live map[Handle]any
}{live: map[Handle]any{}}

// add enters v in the table and returns its new handle.
func add(v any) Handle {
	table.Lock()
	defer table.Unlock()
	table.last++
	table.live[table.last] = v
	return table.last
}

// lookup returns the object of handle h, which must be a T (named what in
// messages).
func lookup[T any](h Handle, what string) (T, error) {
	table.RLock()
	v, ok := table.live[h]
	last := table.last
	table.RUnlock()
	var zero T
	if !ok {
		return zero, missing(h, last, what)
	}
	t, ok := v.(T)
	if !ok {
		return zero, Inputf("handle %d is a %s, not a %s", h, kindOf(v), what)
	}
	return t, nil
}

// missing is the error of a handle h that is not live.
func missing(h, last Handle, what string) error {
	switch {
	case h == 0:
		return Inputf("no %s (handle 0)", what)
	case h <= last:
		return closedf("the %s of handle %d was closed", what, h)
	}
	return Inputf("handle %d names no %s", h, what)
}

// release removes handle h, which must be a T, and returns its object;
// ok is false when h was already released (nothing to do).
func release[T any](h Handle, what string) (v T, ok bool, err error) {
	table.Lock()
	defer table.Unlock()
	x, live := table.live[h]
	if !live {
		if h != 0 && h <= table.last {
			return v, false, nil // released before: closing twice is fine
		}
		return v, false, missing(h, table.last, what)
	}
	if v, ok = x.(T); !ok {
		return v, false, Inputf("handle %d is a %s, not a %s", h, kindOf(x), what)
	}
	delete(table.live, h)
	return v, true, nil
}

// Live returns the number of live handles (for tests: what a caller
// leaks).
func Live() int {
	table.RLock()
	defer table.RUnlock()
	return len(table.live)
}

func kindOf(v any) string {
	switch v.(type) {
	case *Codec:
		return "codec"
	case *File:
		return "file"
	case *Writer:
		return "writer"
	case *Reader:
		return "reader"
	case *Search:
		return "search"
	}
	return fmt.Sprintf("%T", v)
}
