"""wmzip.open(..., public_key=...): a signed file reads as the unsigned
one; a file without a signature, or signed by another key, is refused."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import wmzip
from conftest import episodes_of


@pytest.fixture(scope="module")
def signed(cli, codec, run, tmp_path_factory):
    d = tmp_path_factory.mktemp("signed")
    plain = d / "plain.wmz"
    with wmzip.Writer(plain, codec, keyframe=16) as w:
        for data, actions in episodes_of(run):
            w.write_episode(data, actions)
    path = d / "signed.wmz"
    shutil.copy(plain, path)
    cli("keygen", "-o", d / "k", "--unencrypted")
    cli("keygen", "-o", d / "other", "--unencrypted")
    cli("sign", "-k", d / "k.key", path)
    return d, plain, path


def test_signed_reads_as_unsigned(signed, codec):
    d, plain, path = signed
    with wmzip.open(plain, codec) as want, wmzip.open(path, codec, public_key=d / "k.pub") as got:
        assert got.episodes == want.episodes
        for e, n in enumerate(want.episodes):
            for t in (0, n - 1):
                assert np.array_equal(got.codes(e, t), want.codes(e, t))
    key = (d / "k.pub").read_bytes()
    with wmzip.open(path, codec, public_key=key) as f, wmzip.open(plain, codec) as want:
        assert np.array_equal(f[0, 0], want[0, 0])


def test_refused(signed, codec):
    d, plain, path = signed
    with pytest.raises(wmzip.SignatureError):
        wmzip.open(plain, codec, public_key=d / "k.pub")
    with pytest.raises(wmzip.SignatureError):
        wmzip.open(path, codec, public_key=d / "other.pub")
