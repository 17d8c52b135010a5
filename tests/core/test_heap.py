import platform

import pytest

from memgym.core.heap import retain_freed_heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_retain_freed_heap_is_accepted_by_glibc():
    assert retain_freed_heap() is True  # mallopt returned 1 for both thresholds
