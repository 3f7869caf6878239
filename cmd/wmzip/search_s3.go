package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/search"
	"golang.org/x/sync/errgroup"
)

// Search and index over memories in a store. A name s3://bucket/prefix/
// (ending in "/", or the bare bucket) stands for every .wmz file under
// the prefix, in key order (the order of the listing: bytes of the key,
// as S3 sorts them); any other s3:// name is one .wmz object. Episodes are
// numbered across the memories in that order, as across the files given.
// A memory's index is the object beside it with .wmz replaced by .wmzi
// (search.IndexPath); search reads it with one GET and checks it against
// the memory (search.Index.Check), or decodes the memory by ranged reads
// when it has none or a stale one. Memories are read s3Parallel at a time.

// s3Parallel bounds the memories a search reads and decodes at once: each
// holds an Object's cache (32 MiB at most) while it is read.
const s3Parallel = 4

// maxIndexBytes bounds an index object read whole: 16 GiB, a billion
// states of 16 codes.
const maxIndexBytes = 16 << 30

// isPrefix reports whether an s3:// name is a prefix rather than an object.
func isPrefix(name string) bool {
	_, key, ok := objstore.ParseURL(name)
	return ok && (key == "" || strings.HasSuffix(key, "/"))
}

// s3Memory is a .wmz object a search or index reads, with what its
// prefix's listing said of its index.
type s3Memory struct {
	url, bucket, key string
	prefix           string // the prefix it was listed under, if any
	listed           bool   // found in a listing, which tells whether ...
	hasIndex         bool   // ... its .wmzi object exists
}

// expandMemories replaces each s3:// prefix among names by the objects
// under it, in key order, leaving other names as they are; mems holds the
// s3:// objects, by URL. A prefix with no object but .wmz files' indexes is
// an error. Objects that are not .wmz files are dropped when they are
// opened (openMemories), as `ls` leaves them out.
func expandMemories(names []string) (out []string, mems map[string]*s3Memory, err error) {
	mems = map[string]*s3Memory{}
	for _, n := range names {
		if !objstore.IsURL(n) {
			out = append(out, n)
			continue
		}
		if !isPrefix(n) {
			bucket, key, err := splitURL(n)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, n)
			mems[n] = &s3Memory{url: n, bucket: bucket, key: key}
			continue
		}
		bucket, prefix, _ := objstore.ParseURL(n)
		s, err := s3Store()
		if err != nil {
			return nil, nil, err
		}
		keys, err := s.Keys(context.Background(), bucket, prefix)
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
			u := "s3://" + bucket + "/" + k.Key
			if mems[u] != nil {
				continue // named twice: searched once, where first named
			}
			out = append(out, u)
			mems[u] = &s3Memory{url: u, bucket: bucket, key: k.Key, prefix: n, listed: true, hasIndex: has[strings.TrimPrefix(search.IndexPath(u), "s3://"+bucket+"/")]}
			found++
		}
		if found == 0 {
			return nil, nil, noMemories(n, len(keys))
		}
	}
	return out, mems, nil
}

// openMemories opens the objects of mems at once, s3Parallel at a time,
// and drops from names the ones that are no .wmz files (by their first
// bytes) and came from a prefix; a .wmz object named alone that is not one
// is an error. The Objects opened are those openS3 returns.
func openMemories(names []string, mems map[string]*s3Memory) ([]string, error) {
	s, err := s3Store()
	if err != nil {
		return nil, err
	}
	type opened struct {
		o   *objstore.Object
		err error
	}
	res := make([]opened, len(names))
	var g errgroup.Group
	g.SetLimit(s3Parallel)
	for i, n := range names {
		m := mems[n]
		if m == nil || s3Objects[n] != nil {
			continue
		}
		g.Go(func() error {
			res[i].o, res[i].err = s.Open(context.Background(), m.bucket, m.key, objstore.ReadOptions{})
			return nil
		})
	}
	g.Wait()
	var out []string
	listed, kept := map[string]int{}, map[string]int{}
	for i, n := range names {
		m := mems[n]
		if m != nil && m.listed {
			listed[m.prefix]++
		}
		if m == nil {
			out = append(out, n)
			continue
		}
		if res[i].err != nil {
			return nil, res[i].err
		}
		if res[i].o != nil {
			s3Objects[n] = res[i].o
		}
		head := make([]byte, 8)
		k, _ := s3Objects[n].ReadAt(head, 0)
		if k < 8 || string(head) != wmzMagic {
			if m.listed {
				delete(mems, n)
				continue
			}
			return nil, fmt.Errorf("%s is not a .wmz file", n)
		}
		kept[m.prefix]++
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

// s3Index is what loading or building one memory's index gave.
type s3Index struct {
	ix  *search.Index
	why error // nil: the index object served; else why the memory was decoded
	err error
}

// s3Indexes returns the index of each memory of mems, s3Parallel at a
// time: its index object when current for codec c, else one built by
// decoding the memory (search.BuildAt) with opt (its Progress unused).
func s3Indexes(ctx context.Context, mems map[string]*s3Memory, c *wmzlib.Codec, opt search.BuildOptions) map[string]*s3Index {
	out := map[string]*s3Index{}
	for u := range mems {
		out[u] = &s3Index{}
	}
	opt.Progress = nil
	var g errgroup.Group
	g.SetLimit(s3Parallel)
	for u, m := range mems {
		o := s3Objects[u]
		r := out[u]
		g.Go(func() error {
			r.ix, r.why = loadS3Index(ctx, m, o, c)
			if r.why == nil {
				return nil
			}
			var pe *fs.PathError
			if !errors.Is(r.why, fs.ErrNotExist) && !errors.Is(r.why, search.ErrStale) && !errors.Is(r.why, search.ErrIndex) && !errors.As(r.why, &pe) {
				r.err = r.why // the memory or the codec is at fault
				return nil
			}
			r.ix, r.err = search.BuildAt(ctx, o, o.Size(), c, opt)
			return nil
		})
	}
	g.Wait()
	return out
}

// loadS3Index reads the index object of memory m (open as o) and checks it
// against o for codec c: an error wrapping fs.ErrNotExist when there is
// none, search.ErrStale or search.ErrIndex when it does not serve.
func loadS3Index(ctx context.Context, m *s3Memory, o *objstore.Object, c *wmzlib.Codec) (*search.Index, error) {
	iu := search.IndexPath(m.url)
	if m.listed && !m.hasIndex {
		return nil, fmt.Errorf("%s: %w", iu, fs.ErrNotExist)
	}
	s, err := s3Store()
	if err != nil {
		return nil, err
	}
	bucket, key, _ := objstore.ParseURL(iu)
	b, err := s.ReadAll(ctx, bucket, key, maxIndexBytes)
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
