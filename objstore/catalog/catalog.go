package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Name is the manifest's name under its root.
const Name = "wmzip-catalog.json"

// Version is the manifest's version; Load refuses others.
const Version = 1

// formatName is the manifest's "format" member.
const formatName = "wmzip-catalog"

// ErrStale is the error of a memory that changed since its entry was
// made: the entry must be refreshed (Update).
var ErrStale = errors.New("the memory changed since the catalog was made (run wmzip catalog to refresh it)")

// Catalog is a manifest: the memories under one root, in key order.
type Catalog struct {
	Format   string  `json:"format"`  // "wmzip-catalog"
	Version  int     `json:"version"` // 1
	Root     string  `json:"root"`    // s3://bucket/prefix/ or a folder, ending in "/"
	Memories []Entry `json:"memories"`
	// Totals over the memories without errors.
	Episodes int   `json:"episodes"`
	States   int64 `json:"states"`
	Bytes    int64 `json:"bytes"`
}

// Entry is one memory of a catalog.
type Entry struct {
	Key      string `json:"key"`      // relative to the root, with "/" between folders
	Size     int64  `json:"size"`     // bytes
	ETag     string `json:"etag"`     // the store's, without quotes; "" for a local file
	Modified string `json:"modified"` // last modification (RFC 3339), as listed
	// IndexSHA256 is the SHA-256 of the file's index (SPEC.md 6.7), in
	// hex; Fingerprint, in hex, what a search index of the file records
	// of it (search.Fingerprint).
	IndexSHA256 string `json:"index_sha256"`
	Fingerprint string `json:"fingerprint"`
	ModelID     string `json:"model_id"`
	Embedded    bool   `json:"model_embedded"`
	// Episodes holds the states of each episode, Chunks the states of
	// each chunk of each episode.
	Episodes []int   `json:"episodes"`
	Chunks   [][]int `json:"chunks"`
	States   int64   `json:"states"`
	// BitsPerState is the file's bytes, an embedded model's excluded,
	// times 8 over its states.
	BitsPerState float64    `json:"bits_per_state"`
	Distortion   Distortion `json:"distortion"`
	// Head holds the file's bytes before its first record (header and
	// level table) and Tail its index and trailer, from TailOffset on,
	// when they are small (MaxHead, MaxTail): with them the file opens
	// with no request.
	Head       []byte `json:"head,omitempty"`
	Tail       []byte `json:"tail,omitempty"`
	TailOffset int64  `json:"tail_offset,omitempty"`
	// SearchIndex is the search index beside the memory (key.wmzi), as
	// listed, or nil.
	SearchIndex *Object `json:"search_index"`
	// Error says why the object is no memory that can be read (a damaged
	// file); the fields above but Key, Size, ETag and Modified are then
	// unset.
	Error string `json:"error,omitempty"`
}

// Distortion is what the writer recorded of a memory's distortion
// (SPEC.md 6.7, the report): means per slot vector, null when not
// measured.
type Distortion struct {
	Source    *float64 `json:"source"`    // relative squared error against the source floats
	Cosine    *float64 `json:"cosine"`    // cosine similarity to them
	Retention *float64 `json:"retention"` // against the lossless reconstruction
}

// Object is an object beside a memory: its key, size and ETag.
type Object struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	ETag string `json:"etag"`
}

// Limits of the bytes an entry holds to open its memory.
const (
	MaxHead = 64 << 10
	MaxTail = 1 << 20
)

// URL returns the memory's full name: the root joined with its key.
func (c *Catalog) URL(e *Entry) string { return c.Root + e.Key }

// Stats count what an Update did.
type Stats struct {
	Kept, Refreshed, Added, Dropped int
	Written                         bool  // the manifest was written
	Requests                        int64 // requests to the store (0 for a folder)
}

// Options configure Update.
type Options struct {
	// Parallel is how many memories are read at once (default 8).
	Parallel int
	// DryRun leaves the manifest unwritten.
	DryRun bool
}

// Load reads the catalog of root (an s3:// prefix or a folder), or the
// manifest name names (ending in .json): one request.
func Load(ctx context.Context, name string) (*Catalog, error) {
	src, manifest, err := sourceOf(name)
	if err != nil {
		return nil, err
	}
	b, _, err := src.read(ctx, manifest)
	if err != nil {
		return nil, err
	}
	return parse(b, src.root())
}

func parse(b []byte, root string) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("catalog of %s: %w", root, err)
	}
	if c.Format != formatName {
		return nil, fmt.Errorf("catalog of %s: not a wmzip catalog (format %q)", root, c.Format)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("catalog of %s: version %d; this reader knows version %d", root, c.Version, Version)
	}
	c.Root = root // where it was found, wherever it was made
	return &c, nil
}

// Update brings the catalog of root (an s3:// prefix or a folder) up to
// date and writes it: it lists the root, keeps the entries whose memory
// is as listed, reads again those whose memory changed (see the package
// documentation), adds the new memories (keys ending in .wmz), drops the
// vanished ones. In a store the manifest is written only if no other
// writer replaced it meanwhile (a conditional write; the error wraps
// objstore.ErrChanged).
func Update(ctx context.Context, root string, opt Options) (*Catalog, Stats, error) {
	var st Stats
	src, manifest, err := sourceOf(root)
	if err != nil {
		return nil, st, err
	}
	if strings.HasSuffix(root, ".json") {
		return nil, st, fmt.Errorf("%s: name the root (a prefix or folder) to update, not a manifest", root)
	}
	before := src.requests()
	var old *Catalog
	b, tag, err := src.read(ctx, manifest)
	switch {
	case err == nil:
		if old, err = parse(b, src.root()); err != nil {
			return nil, st, err
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, st, err
	}
	listed, err := src.list(ctx)
	if err != nil {
		return nil, st, err
	}
	byKey := map[string]listedObject{}
	for _, l := range listed {
		byKey[l.Key] = l
	}
	prev := map[string]*Entry{}
	if old != nil {
		for i := range old.Memories {
			prev[old.Memories[i].Key] = &old.Memories[i]
		}
	}
	cat := &Catalog{Format: formatName, Version: Version, Root: src.root()}
	for _, l := range listed {
		if strings.HasSuffix(l.Key, ".wmz") {
			cat.Memories = append(cat.Memories, Entry{Key: l.Key, Size: l.Size, ETag: l.ETag, Modified: l.Modified})
		}
	}
	par := opt.Parallel
	if par <= 0 {
		par = 8
	}
	var g errgroup.Group
	g.SetLimit(par)
	var mu sync.Mutex
	for i := range cat.Memories {
		e := &cat.Memories[i]
		if ix, ok := byKey[e.Key+"i"]; ok {
			e.SearchIndex = &Object{Key: ix.Key, Size: ix.Size, ETag: ix.ETag}
		}
		p := prev[e.Key]
		g.Go(func() error {
			keep := false
			var err error
			switch {
			case p != nil && p.Error == "":
				keep, err = src.same(ctx, p, e)
			case p != nil: // unreadable as listed then: again only if changed
				keep = p.Size == e.Size && p.ETag == e.ETag && p.Modified == e.Modified
			}
			if err == nil && keep {
				si := e.SearchIndex
				*e = *p
				e.SearchIndex = si
			} else if err == nil {
				err = src.describe(ctx, e)
			}
			if err != nil {
				e.Error = err.Error()
			}
			mu.Lock()
			switch {
			case keep:
				st.Kept++
			case p != nil:
				st.Refreshed++
			default:
				st.Added++
			}
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	if old != nil {
		st.Dropped = len(old.Memories) - st.Kept - st.Refreshed
	}
	cat.totals()
	if !opt.DryRun {
		out, err := json.MarshalIndent(cat, "", " ")
		if err != nil {
			return nil, st, err
		}
		if err := src.write(ctx, manifest, append(out, '\n'), tag, old != nil); err != nil {
			return nil, st, err
		}
		st.Written = true
	}
	st.Requests = src.requests() - before
	return cat, st, nil
}

func (c *Catalog) totals() {
	sort.Slice(c.Memories, func(i, j int) bool { return c.Memories[i].Key < c.Memories[j].Key })
	c.Episodes, c.States, c.Bytes = 0, 0, 0
	for _, e := range c.Memories {
		if e.Error == "" {
			c.Episodes += len(e.Episodes)
			c.States += e.States
			c.Bytes += e.Size
		}
	}
}

// Valid returns the entries without errors, in key order.
func (c *Catalog) Valid() []*Entry {
	var out []*Entry
	for i := range c.Memories {
		if c.Memories[i].Error == "" {
			out = append(out, &c.Memories[i])
		}
	}
	return out
}
