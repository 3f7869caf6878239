"""wmzip: compressed memory for long-horizon agents, numpy in and out.

An agent's experience is a trajectory: at each step an action and an
observation, here slot vectors of floats (embeddings). A Codec quantizes
each observation into a state of codes, predicts every code with a small
shared world model, and codes only what it could not predict. Trained on
floats it is a family of quantizers of several sizes, each with its own
world model (Codec.members): lossy writing picks the member and, state by
state, the values that cost the fewest bits for the distortion allowed.
Files are indexed for random access and decode bit-exactly on every
machine.

    codec = wmzip.Codec.train(obs, actions=actions, episode_start=starts)
    with wmzip.Writer("memory.wmz", codec, source_distortion=0.05) as w:
        w.write_episode(obs_of_an_episode, its_actions)
    with wmzip.open("memory.wmz", codec) as f:
        state = f[1, 7]          # episode 1, step 7: (S, d) float32
    with wmzip.Memory(["memory.wmz"], codec) as m:
        hits = m.states(state, k=5)  # hits.episode, .step, .distance

The package is a thin layer over the C library built from the Go module
(wmzip.h); long calls release the GIL.
"""

from ._catalog import Catalog, load_catalog, update_catalog
from ._codec import Codec, Geometry, RatePoint
from ._file import Distortion, Episode, File, Info, decode, open
from ._lib import (
    ChecksumError,
    ClosedError,
    CorruptError,
    Error,
    InputError,
    InternalError,
    ModelMismatchError,
    NoModelError,
    SignatureError,
    TooLargeError,
    UnsupportedError,
)
from ._search import Hits, IndexInfo, Memory
from ._writer import Account, Search, Writer, encode

__all__ = [
    "Account",
    "Catalog",
    "ChecksumError",
    "ClosedError",
    "Codec",
    "CorruptError",
    "Distortion",
    "Episode",
    "Error",
    "File",
    "Geometry",
    "Hits",
    "IndexInfo",
    "Info",
    "InputError",
    "InternalError",
    "Memory",
    "ModelMismatchError",
    "NoModelError",
    "RatePoint",
    "Search",
    "SignatureError",
    "TooLargeError",
    "UnsupportedError",
    "Writer",
    "decode",
    "encode",
    "load_catalog",
    "open",
    "update_catalog",
]

for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or callable(_obj):
        _obj.__module__ = __name__
del _name, _obj
