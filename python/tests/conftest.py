"""Fixtures of the Python package's tests: a small agent's run made here
(no shared data), codecs trained on it once a session, and the wmzip
command built from this checkout to compare against."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import wmzip

ROOT = Path(__file__).resolve().parents[2]


def graphworld(cli, path, nodes=50, episodes=8, steps=60) -> dict:
    """A walk through the command's synthetic Graph World: codes of 32
    slots × 32 subspaces below 64, with actions and episodes."""
    cli("gen", "graphworld", "-q", "--nodes", nodes, "--episodes", episodes, "--steps", steps, "-o", path)
    return load(path)


def observations(codes, dim=64, noise=0.05, seed=1) -> np.ndarray:
    """Float observations whose structure is that of codes: each slot
    vector the concatenation, over its M subspaces, of a codebook entry of
    dim/M floats picked by its code, plus noise."""
    T, S, M = codes.shape
    rng = np.random.default_rng(seed)
    book = rng.standard_normal((M, int(codes.max()) + 1, dim // M)).astype(np.float32)
    obs = book[np.arange(M), codes.astype(np.intp)].reshape(T, S, dim)
    return (obs + noise * rng.standard_normal(obs.shape)).astype(np.float32)


def episodes_of(run: dict, key: str = "obs"):
    """(data, actions) of each episode of a run."""
    bounds = list(run["episode_start"]) + [len(run["actions"])]
    return [(run[key][a:b], run["actions"][a:b]) for a, b in zip(bounds, bounds[1:])]


@pytest.fixture(scope="session")
def codes_run(cli, tmp_path_factory) -> dict:
    """An agent's run as codes (K = 64: uint8): Graph World's walks."""
    return graphworld(cli, tmp_path_factory.mktemp("gw") / "gw.npz")


@pytest.fixture(scope="session")
def run(codes_run) -> dict:
    """An agent's run as float observations: 4 slot vectors of 64 floats a
    state, of Graph World's structure (the arrays of a trajectory .npz)."""
    r = codes_run
    return {"obs": observations(r["codes"][:, :4]), "actions": r["actions"], "episode_start": r["episode_start"]}


@pytest.fixture(scope="session")
def run_npz(run, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("run") / "run.npz"
    np.savez(p, **run)
    return p


@pytest.fixture(scope="session")
def codec(run) -> wmzip.Codec:
    """A codec of the run's observations as Codec.train makes it by
    default: a family of product quantizers (256 centroids), each with
    its world model, no gate; its lossy files are coded by rate and
    distortion, each by one member."""
    return wmzip.Codec.train(run["obs"], actions=run["actions"], episode_start=run["episode_start"])


@pytest.fixture(scope="session")
def gated_codec(run) -> wmzip.Codec:
    """A codec of the run's observations in the seeds' configuration
    (quantizer="single"): one OPQ quantizer of 32 subspaces × 64
    centroids, a world model and a retention gate."""
    return wmzip.Codec.train(run["obs"], actions=run["actions"], episode_start=run["episode_start"],
                             quantizer="single")


@pytest.fixture(scope="session")
def codes_codec(codes_run) -> wmzip.Codec:
    """A codec of codes only (no quantizer), with a gate: 32 × 32 codes a
    state."""
    r = codes_run
    return wmzip.Codec.train(codes=r["codes"], actions=r["actions"], episode_start=r["episode_start"])


@pytest.fixture(scope="session")
def wide_run(codes_run) -> dict:
    """Codes of an alphabet of 512 (16 bits): Graph World's, spread."""
    c = codes_run["codes"].astype(np.uint16) * 7 + 50
    return dict(codes_run, codes=c)


@pytest.fixture(scope="session")
def wide_codec(wide_run) -> wmzip.Codec:
    r = wide_run
    return wmzip.Codec.train(codes=r["codes"], actions=r["actions"], episode_start=r["episode_start"], alphabet=512)


@pytest.fixture(scope="session")
def cli(tmp_path_factory):
    """Runs the wmzip command of this checkout: cli(args...) -> stdout."""
    go = os.environ.get("GO") or shutil.which("go")
    if go is None:
        pytest.fail("the tests compare against the wmzip command: Go is needed to build it")
    exe = tmp_path_factory.mktemp("bin") / "wmzip"
    subprocess.run([go, "build", "-o", str(exe), "./cmd/wmzip"], cwd=ROOT, check=True)

    def run(*args, ok=True) -> subprocess.CompletedProcess:
        p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
        if ok and p.returncode != 0:
            raise AssertionError(f"wmzip {' '.join(map(str, args))}: {p.stderr}")
        return p

    return run


def load(path) -> dict:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}
