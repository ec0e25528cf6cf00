"""Run bad-input cases in one process, each as the console script would: exit code, output,
CPU seconds and the process's peak memory after it (``tests/test_badinput.py``).

Reads a JSON list of cases on stdin (``id``, ``args``, ``stdin``: base64 or null) and writes
one JSON line per case. CPU time, not wall time, is what a case is held to: on a machine
other work keeps busy, wall time also counts the waits for a core. A case still running
after ``LIMIT`` seconds of wall time ends the run, since a hang uses no CPU (the test
then reports the cases without a result).
"""

from __future__ import annotations

import base64
import json
import os
import resource
import sys
import threading
import time

LIMIT = 60.0


def main() -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    cases = json.load(sys.stdin)
    out = sys.stdout
    for case in cases:
        data = base64.b64decode(case["stdin"]) if case.get("stdin") is not None else None
        timer = threading.Timer(LIMIT, lambda: os._exit(70))
        timer.start()
        started = time.process_time()
        result = CliRunner().invoke(cli, case["args"], input=data)
        took = time.process_time() - started
        timer.cancel()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        record = {
            "id": case["id"],
            "code": result.exit_code,
            "stdout": result.stdout[-2000:],
            "stderr": result.stderr[-4000:],
            "seconds": took,
            "peak": peak,
            "exception": repr(result.exception) if result.exit_code == 1 else "",
        }
        out.write(json.dumps(record) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
