"""Training speed settings that must not change the arithmetic."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch", reason="training code needs the train extra")

# augment a locator batch (16 x 3 x 240 x 320, as in training) 10 times; print the minor page faults it took
_STEPS = textwrap.dedent(
    """
    import resource, sys
    import torch
    from models import fast
    from models.sagrada.train import _colour_jitter
    kept = fast.keep_freed_memory() if sys.argv[1] == "keep" else None
    torch.set_num_threads(1)
    batch, generator = torch.rand(16, 3, 240, 320), torch.Generator().manual_seed(0)
    _colour_jitter(batch, generator)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        _colour_jitter(batch, generator)
    print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """
)


def _faults(setting: str) -> tuple[str, int]:
    kept, faults = subprocess.run([sys.executable, "-c", _STEPS, setting], check=True, capture_output=True, text=True).stdout.split()
    return kept, int(faults)


def test_kept_freed_memory_is_not_faulted_in_again() -> None:
    kept, with_kept = _faults("keep")
    if kept != "True":
        pytest.skip("this C library takes no mallopt settings (not glibc)")
    _, with_defaults = _faults("defaults")
    assert with_defaults > 10 * 3600  # the batch's 15 MB faulted in again every step at least once (4 KiB pages)
    assert with_kept < with_defaults / 10


@pytest.mark.parametrize(
    ("flags", "native"),
    [
        ("fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni", True),
        ("fpu sse2 avx2 amx_bf16 amx_tile", True),
        ("fpu sse2 avx2 fma f16c", False),  # AVX2 only: autocast would emulate bfloat16
        ("fpu avx512f avx512_fp16", False),
    ],
)
def test_autocast_is_on_only_where_the_cpu_does_bfloat16_itself(tmp_path, flags, native):
    from models import fast

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    assert fast.native_bf16(cpuinfo) is native
    assert fast.native_bf16(tmp_path / "absent") is False  # flags unknown (not Linux): float32
