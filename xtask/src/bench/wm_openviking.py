"""Times OpenViking's merge of working-memory sections for `cargo xtask bench wm`.

Reads {"document": str, "sections": {...}, "runs": int, "run_seconds": float} on stdin and
prints one JSON line: {"us_per_merge": float, "merges": int, "output_bytes": int}. Time per
merge is this thread's CPU time, best of the runs, as the Rust side measures its own.
"""

import json
import logging
import sys
import time

from openviking.session.working_memory import merge_wm_sections


def main() -> None:
    request = json.load(sys.stdin)
    document = request["document"]
    sections = request["sections"]
    runs = int(request["runs"])
    run_seconds = float(request["run_seconds"])
    # The guards log a line for every refused operation; logging is not what is measured.
    logging.disable(logging.CRITICAL)
    output = merge_wm_sections(document, sections)
    best = None
    best_count = 0
    for _ in range(runs):
        started = time.perf_counter()
        cpu_started = time.thread_time_ns()
        done = 0
        while time.perf_counter() - started < run_seconds:
            for _ in range(16):
                merge_wm_sections(document, sections)
            done += 16
        per_merge = (time.thread_time_ns() - cpu_started) / done / 1000.0
        if best is None or per_merge < best:
            best = per_merge
            best_count = done
    print(
        json.dumps(
            {"us_per_merge": best, "merges": best_count, "output_bytes": len(output.encode())}
        )
    )


if __name__ == "__main__":
    main()
