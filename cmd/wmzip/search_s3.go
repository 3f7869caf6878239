package main

import (
	"context"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/objstore"
	"github.com/wmzip/wmzip/search"
)

// Search and index over memories in a store (objstore.Store.Memories): a
// name s3://bucket/prefix/ stands for every .wmz file under the prefix,
// in key order; episodes are numbered across the memories in that order,
// as across the files given.

// s3AtOnce is how many memories Store.Memories and Store.Indexes read at
// once, as docs/cli.md says.
const s3AtOnce = 4

// expandMemories replaces each s3:// prefix among names by the .wmz
// objects under it and opens every s3:// memory; mems holds them, by URL.
// The Objects opened are those openS3 returns from then on.
func expandMemories(names []string) ([]string, map[string]*objstore.Memory, error) {
	named := false
	for _, n := range names {
		named = named || objstore.IsURL(n)
	}
	if !named {
		return names, nil, nil
	}
	s, err := s3Store()
	if err != nil {
		return nil, nil, err
	}
	out, mems, err := s.Memories(context.Background(), names)
	for u, m := range mems {
		s3Objects[u] = m.Object
	}
	return out, mems, err
}

// s3Indexes sets the index of each memory of mems.
func s3Indexes(ctx context.Context, mems map[string]*objstore.Memory, c *wmzlib.Codec, opt search.BuildOptions) {
	s, _ := s3Store() // made by expandMemories
	s.Indexes(ctx, mems, c, opt)
}
