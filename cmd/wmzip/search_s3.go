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
// as across the files given. The Objects opened are those openS3 returns.

// expandMemories replaces each s3:// prefix among names by the objects
// under it; mems holds the s3:// objects, by URL.
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
	return s.Memories(context.Background(), names)
}

// openMemories opens the memories of names, dropping the objects of a
// prefix that are no .wmz files.
func openMemories(names []string, mems map[string]*objstore.Memory) ([]string, error) {
	s, err := s3Store()
	if err != nil {
		return nil, err
	}
	return s.OpenMemories(context.Background(), names, mems, s3Objects)
}

// s3Indexes returns the index of each memory of mems.
func s3Indexes(ctx context.Context, mems map[string]*objstore.Memory, c *wmzlib.Codec, opt search.BuildOptions) map[string]*objstore.MemoryIndex {
	s, _ := s3Store() // made by openMemories
	return s.Indexes(ctx, mems, s3Objects, c, opt)
}
