"""Keep freed heap memory in the process (glibc), so per-frame numpy/Open3D buffers are reused.

Rendering a 256x256 frame allocates and frees a few MB of arrays. With glibc's default dynamic
thresholds those buffers are returned to the kernel at the end of each frame (heap trimming /
``mmap``) and page-faulted back in on the next: on its own, keeping them took a generated house's
frames from 0.60x to 0.75x of the bare ray cast (``python -m speed embodied_render``, loaded
2-core machine). :func:`retain_freed_heap` raises glibc's ``M_MMAP_THRESHOLD`` to 64 MiB and ``M_TRIM_THRESHOLD`` to 256 MiB for the process:
up to that much freed memory stays mapped for reuse. It does nothing on other C libraries.
"""

from __future__ import annotations

import ctypes
import functools
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 64 << 20
TRIM_THRESHOLD_BYTES = 256 << 20


@functools.cache
def retain_freed_heap() -> bool:
    """Set the thresholds once per process; True when glibc accepted them."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
