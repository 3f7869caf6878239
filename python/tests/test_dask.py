"""wmzip.dask on a distributed.LocalCluster of two worker processes,
against the S3 server scripts/s3server.sh starts (AWS_ENDPOINT_URL and
the credentials it exports; .ci/run's S3 stage): a fleet of 100 small
memories encoded on the workers (one of which is killed mid-encode),
catalogued, searched (equal to one Memory over local copies of the same
files), read as a dask array, and one memory replaced under its catalog.
Without a server the tests skip (fail with WMZIP_S3_REQUIRED=1)."""

from __future__ import annotations

import os
import signal
import sys
import uuid

import numpy as np
import pytest

import wmzip

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
import wmzip.dask as wd  # noqa: E402

if not os.environ.get("AWS_ENDPOINT_URL"):
    if os.environ.get("WMZIP_S3_REQUIRED") == "1":
        raise RuntimeError("no S3 server: AWS_ENDPOINT_URL is unset (eval \"$(bash scripts/s3server.sh start)\")")
    pytest.skip("no S3 server: AWS_ENDPOINT_URL is unset (eval \"$(bash scripts/s3server.sh start)\")",
                allow_module_level=True)

# The workers unpickle this module's functions by value: they cannot
# import it.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

S, D, M, K = 4, 32, 8, 16
MEMORIES = 100
BOOK = np.random.default_rng(1).standard_normal((M, K, D // M)).astype(np.float32)


def walk(seed: int, episodes: int = 2, steps: int = 50) -> list:
    """(obs, actions) of each episode of a small agent's run: every
    subspace's code drifting by one now and then, plus noise."""
    r = np.random.default_rng(seed)
    out = []
    for _ in range(episodes):
        codes = np.cumsum(r.integers(0, 2, (steps, S, M)), axis=0) % K
        obs = BOOK[np.arange(M), codes].reshape(steps, S, D) + 0.05 * r.standard_normal((steps, S, D))
        out.append((obs.astype(np.float32), r.integers(0, 4, steps)))
    return out


class KillOnce:
    """A run whose first making kills the worker after its first episode
    was written: the task dies mid-encode, and Dask runs it again."""

    def __init__(self, marker: str, run: list):
        self.marker, self.run = marker, run

    def __call__(self):
        if os.path.exists(self.marker):
            return self.run
        open(self.marker, "w").close()
        return self._die()

    def _die(self):
        yield self.run[0]
        os.kill(os.getpid(), signal.SIGKILL)
        yield self.run[1]


@pytest.fixture(scope="module")
def fleet_codec() -> wmzip.Codec:
    tr = walk(0, episodes=8)
    obs = np.concatenate([o for o, _ in tr])
    acts = np.concatenate([a for _, a in tr])
    return wmzip.Codec.train(obs, actions=acts, episode_start=np.arange(0, len(obs), 50), quantizer="single")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def fleet(client, fleet_codec, tmp_path_factory):
    """The fleet: 100 memories under a fresh prefix, encoded on the
    workers (memory 37's worker killed mid-encode), and the same runs
    encoded here into a folder."""
    root = f"s3://wmzip/fleet-{uuid.uuid4().hex[:8]}/"
    tmp = tmp_path_factory.mktemp("fleet")
    runs = [walk(100 + i) for i in range(MEMORIES)]
    lazy = list(runs)
    lazy[37] = KillOnce(str(tmp / "killed"), runs[37])
    workers = set(client.scheduler_info()["workers"])
    done, stats = wd.encode(lazy, fleet_codec, root, keyframe=16)
    assert (tmp / "killed").exists(), "the killing run never ran"
    assert set(client.scheduler_info()["workers"]) != workers, "no worker died"
    local = tmp / "local"
    local.mkdir()
    for i, r in enumerate(runs):
        wmzip.encode(local / f"run-{i:05d}.wmz", fleet_codec, r, keyframe=16)
    return {"root": root, "runs": runs, "done": done, "stats": stats, "local": local}


def test_encode_killed_worker_loses_nothing(fleet, client):
    """Every run is one whole memory, byte for byte the one encoded here
    (its size and fingerprint, which covers its header, index, trailer
    and every record's CRC), the killed one too; the catalog lists
    them all."""
    assert fleet["stats"]["Added"] == MEMORIES and fleet["stats"]["Written"]
    assert [d["states"] for d in fleet["done"]] == [100] * MEMORIES
    cat = wmzip.load_catalog(fleet["root"])
    wmzip.update_catalog(fleet["local"])
    here = wmzip.load_catalog(fleet["local"])
    assert len(cat) == len(here) == MEMORIES and not cat.errors
    for a, b in zip(cat.entries, here.entries):
        assert (a["key"], a["size"], a["fingerprint"], a["index_sha256"]) == (
            b["key"], b["size"], b["fingerprint"], b["index_sha256"])


def test_search_equals_local(fleet, fleet_codec, client):
    """Fleet search over the 100 memories (their indexes saved beside
    them) returns what one Memory over the local copies returns: states
    and slots, several task counts."""
    root = fleet["root"]
    cat = wmzip.load_catalog(root)
    with wmzip.Memory(cat.urls, fleet_codec, save=True, entries=cat.entries) as m:
        assert {i.index for i in m.info} == {"built"}
    stats = wmzip.update_catalog(root)
    assert stats["Kept"] == MEMORIES
    cat = wmzip.load_catalog(root)
    assert all(e["search_index"] for e in cat.entries)
    q = np.concatenate([fleet["runs"][i][1][0][:4] for i in (3, 50, 99)])
    q = q + 0.01 * np.random.default_rng(5).standard_normal(q.shape).astype(np.float32)
    local = sorted(str(p) for p in fleet["local"].glob("*.wmz"))
    with wmzip.Memory(local, fleet_codec) as m:
        want = m.states(q, k=10)
        want_slots = m.slots(q[:, 0], k=7)
    for tasks in (None, 3, 100):
        got = wd.search(cat, fleet_codec, q, k=10, tasks=tasks)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    got = wd.search(cat, fleet_codec, q[:, 0], k=7, slots=True)
    for a, b in zip(got, want_slots):
        np.testing.assert_array_equal(a, b)


def test_read(fleet, fleet_codec, client):
    """The fleet as one dask array, one block a chunk: slices equal the
    local files' reconstructions."""
    cat = wmzip.load_catalog(fleet["root"])
    a = wd.read(cat, fleet_codec)
    assert a.shape == (MEMORIES * 100, S, D) and a.numblocks[0] == MEMORIES * 2 * 4
    with wmzip.open(fleet["local"] / "run-00002.wmz", fleet_codec) as f:
        want = np.concatenate([f.read(0).obs, f.read(1).obs])
    np.testing.assert_array_equal(a[200:300].compute(), want)
    c = wd.read(cat, fleet_codec, codes=True)
    assert c.dtype == fleet_codec.code_dtype and c.shape[2] == fleet_codec.subspaces


def test_replaced_memory(fleet, fleet_codec, client):
    """A memory replaced under its catalog: reads through the old entry
    fail (never the new bytes), a search still equals the local one over
    the files as they now are, and a refresh reads that memory again and
    keeps the others."""
    root = fleet["root"]
    old = wmzip.load_catalog(root)
    new_run = walk(999, episodes=3)
    wd.encode([new_run], fleet_codec, root, names=["run-00010.wmz"], catalog_update=False, keyframe=16)
    wmzip.encode(fleet["local"] / "run-00010.wmz", fleet_codec, new_run, keyframe=16)
    a = wd.read(old, fleet_codec)
    with pytest.raises(wmzip.Error, match="changed since the catalog"):
        a[1000:1010].compute()
    q = new_run[2][0][:3]
    local = sorted(str(p) for p in fleet["local"].glob("*.wmz"))
    with wmzip.Memory(local, fleet_codec) as m:
        want = m.states(q, k=5)
    got = wd.search(old, fleet_codec, q, k=5)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    stats = wmzip.update_catalog(root)
    assert (stats["Refreshed"], stats["Kept"]) == (1, MEMORIES - 1)
    cat = wmzip.load_catalog(root)
    assert cat.entries[10]["states"] == 150 and cat.entries[10]["etag"] != old.entries[10]["etag"]
