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


def first_chunk(b: bytes) -> int:
    """Offset of the first chunk record of a signed file, found from its
    signature record (SPEC.md 6.16): BodyStart, then the first episode
    record."""
    covered = int.from_bytes(b[-16:-8], "little")
    body = int.from_bytes(b[covered + 56:covered + 64], "little")
    off = body + 8 + int.from_bytes(b[body + 4:body + 8], "little") + 4
    assert b[body:body + 1] == b"E" and b[off:off + 1] == b"C"
    return off


def test_altered_chunk_named(signed, codec):
    d, plain, path = signed
    b = bytearray(path.read_bytes())
    b[first_chunk(bytes(b)) + 16] ^= 1  # a byte of the first chunk's stream
    altered = d / "altered.wmz"
    altered.write_bytes(bytes(b))
    with wmzip.open(altered, codec, public_key=d / "k.pub") as f:
        with pytest.raises(wmzip.SignatureError, match="episode 0 chunk 0"):
            f.codes(0, 0)
        # Only the chunk read is checked: another episode still reads.
        with wmzip.open(plain, codec) as want:
            assert np.array_equal(f.codes(1, 0), want.codes(1, 0))


def test_min_generation(signed, codec):
    d, plain, path = signed
    with wmzip.open(path, codec, public_key=d / "k.pub", min_generation=1) as f:
        assert f.episodes
    with pytest.raises(wmzip.SignatureError, match="older"):
        wmzip.open(path, codec, public_key=d / "k.pub", min_generation=2)
