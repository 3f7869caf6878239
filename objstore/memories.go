package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/search"
	"golang.org/x/sync/errgroup"
)

// Searching memories in a store. A name s3://bucket/prefix/ (ending in
// "/", or the bare bucket) stands for every .wmz file under the prefix,
// in key order (the order of the listing: bytes of the key, as S3 sorts
// them); any other s3:// name is one .wmz object. A memory's index is the
// object beside it with .wmz replaced by .wmzi (search.IndexPath):
// Indexes reads it with one GET and checks it against the memory
// (search.Index.Check), or decodes the memory by ranged reads when it has
// none or a stale one.

// MemoriesAtOnce bounds the memories OpenMemories and Indexes read at
// once: each holds an Object's cache (32 MiB at most) while it is read.
const MemoriesAtOnce = 4

// maxIndexBytes bounds an index object read whole: 16 GiB, a billion
// states of 16 codes.
const maxIndexBytes = 16 << 30

// wmzMagic is the signature every .wmz file starts with (SPEC.md 6.2).
const wmzMagic = "\x89WMZ\r\n\x1a\n"

// A Memory is a .wmz object named for a search, with what the listing of
// its prefix said of its index.
type Memory struct {
	URL, Bucket, Key string
	// Prefix is the name of the prefix it was listed under, "" for an
	// object named alone.
	Prefix   string
	hasIndex bool // listed, and its .wmzi object was in the listing
}

// Memories replaces each s3:// prefix among names by the objects under
// it, in key order, leaving other names as they are (a memory named twice
// stays where it was first named); mems holds the Memory of each s3://
// name of out. A prefix with no object but indexes is an error. Objects
// that are not .wmz files are dropped by OpenMemories.
func (s *Store) Memories(ctx context.Context, names []string) (out []string, mems map[string]*Memory, err error) {
	mems = map[string]*Memory{}
	for _, n := range names {
		if !IsURL(n) {
			out = append(out, n)
			continue
		}
		if !IsPrefix(n) {
			bucket, key, err := ParseObjectURL(n)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, n)
			mems[n] = &Memory{URL: n, Bucket: bucket, Key: key}
			continue
		}
		bucket, prefix, _ := ParseURL(n)
		keys, err := s.Keys(ctx, bucket, prefix)
		if err != nil {
			return nil, nil, err
		}
		has := map[string]bool{}
		for _, k := range keys {
			has[k.Key] = true
		}
		found := 0
		for _, k := range keys {
			if k.Size == 0 || strings.HasSuffix(k.Key, search.Ext) {
				continue
			}
			u := objURL(bucket, k.Key)
			if mems[u] != nil {
				continue
			}
			out = append(out, u)
			mems[u] = &Memory{URL: u, Bucket: bucket, Key: k.Key, Prefix: n, hasIndex: has[search.IndexPath(k.Key)]}
			found++
		}
		if found == 0 {
			return nil, nil, noMemories(n, len(keys))
		}
	}
	return out, mems, nil
}

// OpenMemories opens the memories of names (those in mems) not yet in
// open, MemoriesAtOnce at a time, and adds them to open. It returns names
// without the objects that came from a prefix and are no .wmz files (by
// their first bytes); an object named alone that is not one is an error.
func (s *Store) OpenMemories(ctx context.Context, names []string, mems map[string]*Memory, open map[string]*Object) ([]string, error) {
	type opened struct {
		o   *Object
		err error
	}
	res := make([]opened, len(names))
	var g errgroup.Group
	g.SetLimit(MemoriesAtOnce)
	for i, n := range names {
		m := mems[n]
		if m == nil || open[n] != nil {
			continue
		}
		g.Go(func() error {
			res[i].o, res[i].err = s.Open(ctx, m.Bucket, m.Key, ReadOptions{})
			return nil
		})
	}
	g.Wait()
	var out []string
	listed, kept := map[string]int{}, map[string]int{}
	for i, n := range names {
		m := mems[n]
		if m == nil {
			out = append(out, n)
			continue
		}
		if m.Prefix != "" {
			listed[m.Prefix]++
		}
		if res[i].err != nil {
			return nil, res[i].err
		}
		if res[i].o != nil {
			open[n] = res[i].o
		}
		head := make([]byte, 8)
		k, _ := open[n].ReadAt(head, 0)
		if k < 8 || string(head) != wmzMagic {
			if m.Prefix != "" {
				delete(mems, n)
				continue
			}
			return nil, fmt.Errorf("%s is not a .wmz file", n)
		}
		kept[m.Prefix]++
		out = append(out, n)
	}
	for pre, k := range listed {
		if kept[pre] == 0 {
			return nil, noMemories(pre, k)
		}
	}
	return out, nil
}

// noMemories is the error of a prefix that holds no .wmz file.
func noMemories(prefix string, objects int) error {
	return fmt.Errorf("%s: no memories under this prefix (%d objects listed, none a .wmz file; 'wmzip ls --all %s' lists what is there)", prefix, objects, prefix)
}

// A MemoryIndex is what loading or building one memory's index gave.
type MemoryIndex struct {
	Index *search.Index
	// Why is nil when the index object served, else why the memory was
	// decoded instead (wrapping fs.ErrNotExist when it has none,
	// search.ErrStale or search.ErrIndex when it did not serve).
	Why error
	Err error // the memory or the codec is at fault: no index
}

// Indexes returns the index of each memory of mems (open in open),
// MemoriesAtOnce at a time: its index object when current for codec c,
// else one built by decoding the memory (search.BuildAt) with opt (its
// Progress unused).
func (s *Store) Indexes(ctx context.Context, mems map[string]*Memory, open map[string]*Object, c *wmzip.Codec, opt search.BuildOptions) map[string]*MemoryIndex {
	out := map[string]*MemoryIndex{}
	for u := range mems {
		out[u] = &MemoryIndex{}
	}
	opt.Progress = nil
	var g errgroup.Group
	g.SetLimit(MemoriesAtOnce)
	for u, m := range mems {
		o, r := open[u], out[u]
		g.Go(func() error {
			r.Index, r.Why = s.loadIndex(ctx, m, o, c)
			if r.Why == nil {
				return nil
			}
			var pe *fs.PathError
			if !errors.Is(r.Why, fs.ErrNotExist) && !errors.Is(r.Why, search.ErrStale) && !errors.Is(r.Why, search.ErrIndex) && !errors.As(r.Why, &pe) {
				r.Err = r.Why
				return nil
			}
			r.Index, r.Err = search.BuildAt(ctx, o, o.Size(), c, opt)
			return nil
		})
	}
	g.Wait()
	return out
}

// loadIndex reads the index object of memory m (open as o) and checks it
// against o for codec c.
func (s *Store) loadIndex(ctx context.Context, m *Memory, o *Object, c *wmzip.Codec) (*search.Index, error) {
	iu := search.IndexPath(m.URL)
	if m.Prefix != "" && !m.hasIndex {
		return nil, fmt.Errorf("%s: %w", iu, fs.ErrNotExist)
	}
	b, err := s.ReadAll(ctx, m.Bucket, search.IndexPath(m.Key), maxIndexBytes)
	if err != nil {
		return nil, err
	}
	ix, err := search.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", iu, err)
	}
	if err := ix.Check(o, o.Size(), c); err != nil {
		return nil, err
	}
	return ix, nil
}
