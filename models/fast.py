"""How training runs fast on two CPU cores: channels-last tensors and bfloat16 autocast, two lanes.

On this project's 2-core machine (AMD EPYC with AVX-512 BF16) a training step of each of the five
networks runs 1.8-2.8x faster this way than in plain float32 with the default memory layout
(measured by ``tests/benchmarks/bench_training_step.py``); the weights, the optimiser, the losses and everything
exported stay float32. ``TRAIN_FP32=1`` turns autocast off (channels-last stays: it does not change
the arithmetic's precision). Each game also trains two networks at once, one thread each
(``start_lane`` / ``join_lane``): that uses the two cores better than two threads on one network.
"""

from __future__ import annotations

import os
from multiprocessing import get_context
from multiprocessing.process import BaseProcess
from typing import TypeVar

import torch
from torch import nn

BF16 = os.environ.get("TRAIN_FP32") != "1"


NetT = TypeVar("NetT", bound=nn.Module)


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
