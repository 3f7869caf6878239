package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/wmzip/wmzip/objstore/catalog"
)

func init() {
	register("catalog", "write or refresh the manifest of the .wmz memories under s3://bucket/prefix or in a folder", runCatalog)
}

func runCatalog(args []string) error {
	fs := newFlags("catalog", "[--dry-run] [--json] [-q] s3://bucket/prefix | folder")
	dry := fs.Bool("dry-run", false, "read and compare, but leave the manifest unwritten")
	asJSON := fs.Bool("json", false, "print the manifest")
	quiet := fs.Bool("q", false, "no summary line")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("want one s3://bucket/prefix or folder")
	}
	cat, st, err := catalog.Update(context.Background(), pos[0], catalog.Options{DryRun: *dry})
	if err != nil {
		return err
	}
	if !*quiet {
		for _, e := range cat.Memories {
			if e.Error != "" {
				fmt.Fprintf(os.Stderr, "note: %s%s: %s (listed, not readable)\n", cat.Root, e.Key, e.Error)
			}
		}
		where := "not written (--dry-run)"
		if st.Written {
			where = "written to " + cat.Root + catalog.Name
		}
		fmt.Fprintf(os.Stderr, "%d memories, %d episodes, %d states, %d bytes: %d kept, %d refreshed, %d added, %d dropped; %d requests; %s\n",
			len(cat.Valid()), cat.Episodes, cat.States, cat.Bytes, st.Kept, st.Refreshed, st.Added, st.Dropped, st.Requests, where)
	}
	if *asJSON {
		return printJSON(cat)
	}
	return nil
}
