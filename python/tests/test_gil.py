"""Long calls release the GIL: other Python threads run while the library
works (issue 28)."""

from __future__ import annotations

import threading
import time

import numpy as np

import wmzip
from conftest import episodes_of


def ticks_during(call) -> tuple[float, float, list[float]]:
    """Runs call on a second thread while this one counts: the call's
    start and end, and the times at which this thread ran meanwhile."""
    ticks: list[float] = []
    window = [0.0, 0.0]
    done = threading.Event()
    started = threading.Event()

    def work():
        started.set()
        window[0] = time.perf_counter()
        call()
        window[1] = time.perf_counter()
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    while not done.is_set():
        ticks.append(time.perf_counter())
    t.join()
    return window[0], window[1], ticks


def big(obs: np.ndarray, states: int) -> np.ndarray:
    return np.ascontiguousarray(np.resize(obs, (states,) + obs.shape[1:]))


def test_quantize_releases_the_gil(codec, run):
    """While one thread quantizes, another runs Python. Were the GIL held,
    this thread could run only in the first switch interval (5 ms) of the
    call, never in the middle half of a call of 100 ms or more."""
    states = 2048
    while True:  # a call long enough to tell, however fast the machine
        obs = big(run["obs"], states)
        t0 = time.perf_counter()
        codec.quantize(obs)
        if time.perf_counter() - t0 >= 0.1 or states >= 1 << 18:
            break
        states *= 4
    start, end, ticks = ticks_during(lambda: codec.quantize(obs))
    quarter = (end - start) / 4
    middle = [x for x in ticks if start + quarter <= x <= end - quarter]
    assert middle, f"no Python ran in the middle of a {end - start:.3f} s call: the GIL was held"


def test_decoding_releases_the_gil(codec, run, tmp_path):
    """Decoding a long episode in one call (File.read) lets other threads
    run in its middle."""
    p = tmp_path / "long.wmz"
    n = 4096
    with wmzip.Writer(p, codec) as w:
        w.write_episode(big(run["obs"], n), np.resize(run["actions"], n))
    with wmzip.open(p, codec, threads=1) as f:
        start, end, ticks = ticks_during(lambda: f.read(0))
    quarter = (end - start) / 4
    middle = [x for x in ticks if start + quarter <= x <= end - quarter]
    if end - start < 0.05:
        return  # too fast to tell a held GIL from a released one
    assert middle, f"no Python ran in the middle of a {end - start:.3f} s decode: the GIL was held"
