"""The README's Python quick start runs as written (issue 28, point 4), on
a small run of embeddings in place of the command line quick start's
train.npz."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

import wmzip
from conftest import ROOT


def test_readme_python(run, tmp_path):
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1, "README.md should have one ```python block"
    np.savez(tmp_path / "train.npz", **run)
    p = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "codes a slot vector;" in p.stdout and "bytes; error against the source" in p.stdout
    codec = wmzip.Codec.train(run["obs"], actions=run["actions"], episode_start=run["episode_start"])
    assert len(codec.members) > 1  # the default: a family
    with wmzip.open(tmp_path / "memory.wmz", codec) as f:
        assert f.states == len(run["actions"]) and f.codec is codec and f.info().lossless
        ref = np.concatenate([e.obs for e in f])
    with wmzip.open(tmp_path / "small.wmz", codec) as f:
        assert f.codec in codec.members or f.codec is codec
        assert f"{f.codec.subspaces} codes a slot vector;" in p.stdout
        got = np.concatenate([e.obs for e in f])
        # within 0.02 of the lossless reconstruction, slot vector by slot vector on average
        assert (((got - ref) ** 2).sum(-1) / (ref**2).sum(-1)).mean() <= 0.02
        # and never larger than lossless, which meets any distortion target
        assert f.info().file_bytes <= (tmp_path / "memory.wmz").stat().st_size


def test_readme_install_command():
    """The install command the README gives is the one CI runs."""
    readme = (ROOT / "README.md").read_text()
    assert "pip install --no-build-isolation ./python" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"-m venv --system-site-packages .*\n.*pip\"? install .*--no-build-isolation \./python", ci), \
        ".ci/run should install the package as the README says"
    assert "pytest" in ci and "python/tests" in ci
