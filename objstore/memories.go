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

// memoriesAtOnce bounds the memories Memories and Indexes read at once:
// each holds an Object's cache (32 MiB at most) while it is read.
const memoriesAtOnce = 4

// maxIndexBytes bounds an index object read whole: 16 GiB, a billion
// states of 16 codes.
const maxIndexBytes = 16 << 30

// wmzMagic is the signature every .wmz file starts with (SPEC.md 6.2).
const wmzMagic = "\x89WMZ\r\n\x1a\n"

// A Memory is a .wmz object named for a search, open for reading, with
// what the listing of its prefix said of its index and, once Indexes ran,
// its index.
type Memory struct {
	URL, Bucket, Key string
	// Prefix is the name of the prefix it was listed under, "" for an
	// object named alone.
	Prefix string
	Object *Object
	// Index is the memory's index once Indexes ran (nil when Err is set).
	// Stale is nil when its index object served, else why the memory was
	// decoded instead (wrapping fs.ErrNotExist when it has none,
	// search.ErrStale or search.ErrIndex when it did not serve). Err is
	// set when the memory or the codec is at fault.
	Index      *search.Index
	Stale, Err error
	hasIndex   bool // listed, and its .wmzi object was in the listing
}

// Memories replaces each s3:// prefix among names by the objects under
// it, in key order, leaving other names as they are (a memory named twice
// stays where it was first named), and opens every s3:// object of the
// result, memoriesAtOnce at a time; mems holds the Memory of each s3://
// name of out. The objects of a prefix that are no .wmz files (by their
// first bytes) are dropped; a prefix left with none, or an object named
// alone that is not a .wmz file, is an error.
func (s *Store) Memories(ctx context.Context, names []string) (out []string, mems map[string]*Memory, err error) {
	names, mems, err = s.list(ctx, names)
	if err != nil {
		return nil, nil, err
	}
	out, err = s.open(ctx, names, mems)
	return out, mems, err
}

// list is the listing step of Memories: prefixes expanded, nothing open.
func (s *Store) list(ctx context.Context, names []string) (out []string, mems map[string]*Memory, err error) {
	mems = map[string]*Memory{}
	for _, n := range names {
		if !IsURL(n) {
			out = append(out, n)
			continue
		}
		bucket, prefix, ok := ParseURL(n)
		if !ok {
			return nil, nil, fmt.Errorf("%s: name an object, s3://bucket/key, or a prefix, s3://bucket/dir/", n)
		}
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			out = append(out, n)
			mems[n] = &Memory{URL: n, Bucket: bucket, Key: prefix}
			continue
		}
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

// open is the opening step of Memories: it drops from names (and mems)
// the objects of a prefix that are no .wmz files.
func (s *Store) open(ctx context.Context, names []string, mems map[string]*Memory) ([]string, error) {
	errs := make([]error, len(names))
	var g errgroup.Group
	g.SetLimit(memoriesAtOnce)
	for i, n := range names {
		m := mems[n]
		if m == nil {
			continue
		}
		g.Go(func() error {
			m.Object, errs[i] = s.Open(ctx, m.Bucket, m.Key, ReadOptions{})
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
		if errs[i] != nil {
			return nil, errs[i]
		}
		head := make([]byte, 8)
		k, _ := m.Object.ReadAt(head, 0)
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

// Indexes sets the Index of each memory of mems, memoriesAtOnce at a
// time: its index object when current for codec c, else one built by
// decoding the memory (search.BuildAt) with opt (its Progress unused).
// What failed is in each Memory's Err.
func (s *Store) Indexes(ctx context.Context, mems map[string]*Memory, c *wmzip.Codec, opt search.BuildOptions) {
	opt.Progress = nil
	var g errgroup.Group
	g.SetLimit(memoriesAtOnce)
	for _, m := range mems {
		g.Go(func() error {
			o := m.Object
			m.Index, m.Stale = s.loadIndex(ctx, m, o, c)
			if m.Stale == nil {
				return nil
			}
			var pe *fs.PathError
			if !errors.Is(m.Stale, fs.ErrNotExist) && !errors.Is(m.Stale, search.ErrStale) && !errors.Is(m.Stale, search.ErrIndex) && !errors.As(m.Stale, &pe) {
				m.Err = m.Stale
				return nil
			}
			m.Index, m.Err = search.BuildAt(ctx, o, o.Size(), c, opt)
			return nil
		})
	}
	g.Wait()
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
