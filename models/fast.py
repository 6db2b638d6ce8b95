"""How training runs fast on two CPU cores: channels-last tensors and bfloat16 autocast, two lanes.

On this project's 2-core machine (AMD EPYC with AVX-512 BF16) a training step of each of the five
networks runs 1.8-2.8x faster this way than in plain float32 with the default memory layout
(measured by ``tests/benchmarks/bench_training_step.py``); the weights, the optimiser, the losses and everything
exported stay float32. A CPU without bfloat16 arithmetic of its own (no ``avx512_bf16`` or
``amx_bf16`` flag: an AVX2-only EPYC, say) emulates it, and there a cell model's step took 4.6 s
under autocast against 0.70 s in float32: autocast is on only where the CPU has it
(``native_bf16``). ``TRAIN_FP32=1`` turns it off anywhere (channels-last stays: it does not change
the arithmetic's precision). Each game also trains two networks at once, one thread each
(``start_lane`` / ``join_lane``): that uses the two cores better than two threads on one network.

Every training step allocates and frees the same few batch-sized tensors (a locator batch of
augmented images is 15 MB). glibc's allocator gives blocks that large back to the system when they
are freed and takes fresh zeroed pages for the next step, so a step page-faults through its whole
batch again and again. ``keep_freed_memory`` asks the allocator to keep such blocks: the same
arithmetic, far fewer page faults (``tests/benchmarks/bench_freed_memory.py`` prints a step's time and
faults both ways; alone a step gains 0-35%, and ``python -m models.train`` went from 47.8 to 37.9 min
with the same weights, its time in the kernel from 9.8 to 1.5 core-minutes).
"""

from __future__ import annotations

import ctypes
import os
import re
from multiprocessing import get_context
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypeVar

import torch
from torch import nn


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU does bfloat16 arithmetic itself (AVX-512 BF16 or AMX), as ``cpuinfo`` lists its flags.

    Without it autocast emulates bfloat16, several times slower than float32; where the flags cannot
    be read (not Linux) the answer is no: float32, never the slow emulation.
    """
    try:
        flags = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"\b(avx512_bf16|amx_bf16)\b", flags) is not None


BF16 = os.environ.get("TRAIN_FP32") != "1" and native_bf16()


NetT = TypeVar("NetT", bound=nn.Module)

# glibc mallopt parameters (malloc.h) and the values set: blocks up to 32 MiB (glibc's largest
# mmap threshold) come from the heap, and up to 1 GiB freed at its top stays mapped (each value fits
# mallopt's int)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
KEEP_FREED = ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 1 << 30), (_M_TOP_PAD, 256 << 20))


def keep_freed_memory() -> bool:
    """Keep freed batch-sized blocks in this process (and the children it forks) instead of returning
    them to the system; return whether the allocator took the settings (False off glibc)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library already loaded in this process
    except AttributeError:  # not glibc: nothing to set
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(parameter, value) == 1 for parameter, value in KEEP_FREED)


def prepare(net: NetT) -> NetT:
    """The network with its convolution weights in channels-last layout, in training mode."""
    net.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # torch's stubs lack this overload
    return net.train()


def forward(net: nn.Module, x: torch.Tensor):
    """Run ``net`` on a float batch under autocast; return its output(s) as float32 tensors."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=BF16):
        out = net(x.contiguous(memory_format=torch.channels_last))
    if isinstance(out, (tuple, list)):
        return tuple(o.float() for o in out)
    return out.float()


def finish(net: NetT) -> NetT:
    """The trained network back in the default layout, in evaluation mode (for calibration and export)."""
    net.to(memory_format=torch.contiguous_format)  # type: ignore[call-overload]  # torch's stubs lack this overload
    return net.eval()


def start_lane(target, *args) -> BaseProcess:
    """Run ``target(*args)`` in a forked child process (the second lane) and return it; the caller
    should then train on one thread itself."""
    process = get_context("fork").Process(target=target, args=args)
    process.start()
    torch.set_num_threads(1)
    return process


def join_lane(process: BaseProcess, what: str) -> None:
    """Wait for a lane; a lane that failed stops the command, naming what it trained."""
    process.join()
    if process.exitcode != 0:
        raise SystemExit(f"{what} training failed (exit {process.exitcode})")
