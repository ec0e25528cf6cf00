"""One context's session: the interpreter's switch interval while reads run."""

from __future__ import annotations

import sys
import threading

from upgradeplan.readers.kube import session


def test_quick_switches_while_reads_run_and_the_interval_of_before_after_the_last() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        usual = sys.getswitchinterval()
        with session.quick_switches():
            quick = sys.getswitchinterval()  # SWITCH_INTERVAL, in the interpreter's units
        assert abs(quick - session.SWITCH_INTERVAL) < 1e-6
        inside: list[float] = []
        started, release = threading.Event(), threading.Event()

        def other_read() -> None:
            with session.quick_switches():
                started.set()
                release.wait(5)
                inside.append(sys.getswitchinterval())

        thread = threading.Thread(target=other_read)
        with session.quick_switches():
            assert sys.getswitchinterval() == quick
            thread.start()
            assert started.wait(5)
        assert sys.getswitchinterval() == quick  # the other read still runs
        release.set()
        thread.join(5)
        assert inside == [quick]
        assert sys.getswitchinterval() == usual
        sys.setswitchinterval(0.0001)  # shorter already: kept
        short = sys.getswitchinterval()  # as the interpreter keeps it (in microseconds)
        with session.quick_switches():
            assert sys.getswitchinterval() == short
        assert sys.getswitchinterval() == short
    finally:
        sys.setswitchinterval(before)
