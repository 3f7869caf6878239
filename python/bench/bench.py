"""The Python side of the package's benchmark (run.py): the reads and the
writes gobench times in Go, through the wmzip package, on the same
inputs. Prints one JSON object of nanoseconds: wall time, and CPU time
(of the reading thread for a read, of the process for a write)."""

import argparse
import json
import resource
import time

import numpy as np

import wmzip


def reads(codec, path, keys, obs):
    ks = [tuple(map(int, line.split())) for line in open(keys)]
    wall, cpu = [], []
    clock, tclock = time.perf_counter_ns, time.thread_time_ns
    with wmzip.open(path, codec) as f:
        read = f.obs if obs else f.codes
        for e, t in ks:
            c0, t0 = tclock(), clock()
            read(e, t)
            wall.append(clock() - t0)
            cpu.append(tclock() - c0)
    return wall, cpu


def process_cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def write(codec, traj, out, obs, bulk):
    with np.load(traj) as z:
        data = z["obs"] if obs else z["codes"]
        actions, starts = z["actions"].astype(np.int64), z["episode_start"]
    ends = list(starts[1:]) + [len(actions)]
    c0, t0 = process_cpu(), time.perf_counter_ns()
    with wmzip.Writer(out, codec) as w:
        for a, b in zip(starts, ends):
            if bulk:
                w.write_episode(data[a:b], actions[a:b])
                continue
            w.begin_episode()
            for t in range(a, b):
                w.write_state(data[t], actions[t])
    return time.perf_counter_ns() - t0, process_cpu() - c0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--file")
    p.add_argument("--keys")
    p.add_argument("--traj")
    p.add_argument("--out")
    p.add_argument("--obs", action="store_true")
    p.add_argument("--bulk", action="store_true", help="write_episode per episode, not write_state per state")
    a = p.parse_args()
    codec = wmzip.Codec.load(a.model)
    res = {}
    if a.keys:
        res["read_ns"], res["read_cpu_ns"] = reads(codec, a.file, a.keys, a.obs)
    if a.out:
        res["write_ns"], res["write_cpu_ns"] = write(codec, a.traj, a.out, a.obs, a.bulk)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
