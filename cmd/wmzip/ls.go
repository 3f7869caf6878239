package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/objstore"
)

func init() {
	register("ls", "list the .wmz files under s3://bucket/prefix or in a folder: states, bytes, model IDs", runLs)
}

// lsEntry is one line of `wmzip ls`, one object of `ls --json`.
type lsEntry struct {
	Name     string  `json:"name"`
	Bytes    int64   `json:"bytes"`
	Episodes int     `json:"episodes,omitempty"`
	States   int64   `json:"states,omitempty"`
	ModelID  string  `json:"model_id,omitempty"`
	Embedded bool    `json:"model_embedded,omitempty"`
	Lambda   float64 `json:"-"`
	Mode     string  `json:"mode,omitempty"` // lossless, lambda=X, levels=Q
	Error    string  `json:"error,omitempty"`
	Requests int64   `json:"requests,omitempty"`
}

// lsJSON is what `ls --json` prints.
type lsJSON struct {
	Files    []lsEntry `json:"files"`
	Memories int       `json:"memories"`
	States   int64     `json:"states"`
	Bytes    int64     `json:"bytes"`
	Requests int64     `json:"requests,omitempty"`
	Read     int64     `json:"bytes_read,omitempty"`
}

func runLs(args []string) error {
	fs := newFlags("ls", "[--json] [--all] s3://bucket/prefix | folder")
	asJSON := fs.Bool("json", false, "print one JSON object")
	all := fs.Bool("all", false, "list objects that are not .wmz files too")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want one s3://bucket/prefix or folder")
	}
	var out lsJSON
	if objstore.IsURL(pos[0]) {
		err = lsS3(pos[0], &out)
	} else {
		err = lsDir(pos[0], &out)
	}
	if err != nil {
		return err
	}
	keep := out.Files[:0]
	for _, e := range out.Files {
		if e.Error == "" {
			out.Memories++
			out.States += e.States
			out.Bytes += e.Bytes
		}
		if e.Error == "" || *all {
			keep = append(keep, e)
		}
	}
	out.Files = keep
	if *asJSON {
		if out.Files == nil {
			out.Files = []lsEntry{}
		}
		return printJSON(out)
	}
	for _, e := range out.Files {
		if e.Error != "" {
			fmt.Printf("%-40s %12d  %s\n", e.Name, e.Bytes, e.Error)
			continue
		}
		emb := ""
		if e.Embedded {
			emb = " (embedded)"
		}
		fmt.Printf("%-40s %12d bytes %9d states %5d episodes  %-14s model %s%s\n", e.Name, e.Bytes, e.States, e.Episodes, e.Mode, e.ModelID, emb)
	}
	fmt.Printf("%d memories, %d states, %d bytes", out.Memories, out.States, out.Bytes)
	if out.Requests > 0 {
		fmt.Printf("; read with %d requests, %d bytes", out.Requests, out.Read)
	}
	fmt.Println()
	return nil
}

// lsS3 lists the objects under an s3:// prefix from their headers and
// indexes (ranged GETs).
func lsS3(url string, out *lsJSON) error {
	bucket, prefix, ok := objstore.ParseURL(url)
	if !ok {
		return fmt.Errorf("%s: want s3://bucket/prefix", url)
	}
	s, err := s3Store()
	if err != nil {
		return err
	}
	ents, err := s.List(context.Background(), bucket, prefix, objstore.ReadOptions{})
	if err != nil {
		return err
	}
	for _, e := range ents {
		le := lsEntry{Name: "s3://" + bucket + "/" + e.Key, Bytes: e.Size, Requests: e.Stats.Requests}
		out.Requests += e.Stats.Requests
		out.Read += e.Stats.Bytes
		if e.Err != nil {
			le.Error = lsError(e.Err)
		} else {
			describeLs(&le, e.Header, e.Info)
		}
		out.Files = append(out.Files, le)
	}
	return nil
}

// lsDir lists the files of a folder and its subfolders.
func lsDir(dir string, out *lsJSON) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		le := lsEntry{Name: p}
		f, err := os.Open(p)
		if err != nil {
			le.Error = err.Error()
			out.Files = append(out.Files, le)
			return nil
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		le.Bytes = st.Size()
		if h, in, err := format.ReadInfo(f, st.Size()); err != nil {
			le.Error = lsError(err)
		} else {
			describeLs(&le, h, in)
		}
		out.Files = append(out.Files, le)
		return nil
	})
}

func describeLs(le *lsEntry, h format.Header, in format.Info) {
	le.Episodes, le.States = in.Episodes, in.States
	le.ModelID, le.Embedded = h.ModelID.String(), in.Embedded
	switch {
	case len(in.Levels) > 0:
		le.Mode = fmt.Sprintf("levels=%d", len(in.Levels))
	case math.IsInf(in.Lambda, 1):
		le.Mode = "lossless"
	default:
		le.Mode = fmt.Sprintf("lambda=%.4g", in.Lambda)
	}
	le.Lambda = in.Lambda
}

// lsError says in a few words why an object is not listed as a memory.
func lsError(err error) string {
	var fe *format.FormatError
	if errors.As(err, &fe) && fe.Offset == 0 {
		return "not a .wmz file"
	}
	return strings.TrimSpace(err.Error())
}
