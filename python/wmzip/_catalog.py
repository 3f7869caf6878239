"""Catalogs: the manifest of the many .wmz memories under one root, an S3
prefix (s3://bucket/prefix/) or a folder (docs/catalog.md)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from ._lib import lib, options, out_bytes


class Catalog:
    """A catalog as read (load_catalog): its root and its memories' entries
    in key order. entries holds the readable memories (those the manifest
    lists with an error are in errors); url(entry) is a memory's name."""

    def __init__(self, doc: Dict[str, Any]):
        self.root: str = doc["root"]
        self.doc = doc
        mems = doc.get("memories") or []
        self.entries: List[Dict[str, Any]] = [e for e in mems if not e.get("error")]
        self.errors: List[Dict[str, Any]] = [e for e in mems if e.get("error")]
        self.episodes: int = doc["episodes"]
        self.states: int = doc["states"]
        self.bytes: int = doc["bytes"]

    def url(self, entry: Dict[str, Any]) -> str:
        return self.root + entry["key"]

    @property
    def urls(self) -> List[str]:
        return [self.url(e) for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"<wmzip.Catalog of {self.root}: {len(self.entries)} memories, {self.states} states>"


def update_catalog(root: "str | os.PathLike[str]", *, parallel: Optional[int] = None,
                   dry_run: bool = False) -> Dict[str, Any]:
    """Writes or refreshes the manifest of the memories under root (an
    s3:// prefix, read with the standard AWS environment variables, or a
    folder), as `wmzip catalog` does: a memory whose size or ETag changed
    is read again, the others are kept. Returns what was done: Kept,
    Refreshed, Added, Dropped, Written, Requests."""
    r = os.fsencode(root)
    opts = options(parallel=parallel, dry_run=True if dry_run else None)
    return json.loads(out_bytes(lib.wmz_catalog_update, r, opts, text=True))


def load_catalog(name: "str | os.PathLike[str]") -> Catalog:
    """Reads the manifest of name (a root, or the manifest itself) with one
    request."""
    return Catalog(json.loads(out_bytes(lib.wmz_catalog_load, os.fsencode(name), text=True, guess=1 << 20)))

