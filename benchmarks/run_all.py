"""Run every ``bench_*.py`` script in this folder in turn, each in its own interpreter.

Run: ``python benchmarks/run_all.py [--quick] [--repeats N] [--profile] [NAME ...]``
(``make bench`` runs it). The options are passed on to every script; ``NAME``
picks scripts by name (``chain`` runs ``bench_chain.py``). Each script gets its
own process so that one's imports, caches and heap do not skew another's
timings. Exits with 1 if any script failed (a failed correctness check or a
crash, never a missed speed aim), after running all of them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(names: list[str] | None = None) -> list[Path]:
    """The benchmark scripts, sorted by name; only those matching ``names`` if given."""
    found = sorted(HERE.glob("bench_*.py"))
    if names:
        found = [p for p in found if p.stem.removeprefix("bench_") in names or p.stem in names or p.name in names]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every benchmark script in benchmarks/ in turn.")
    parser.add_argument("--quick", action="store_true", help="tiny workloads (smoke test)")
    parser.add_argument("--repeats", type=int, default=None, help="timed passes per case (default: the script's)")
    parser.add_argument("--profile", action="store_true", help="also print each script's cProfile")
    parser.add_argument("names", nargs="*", help="scripts to run (e.g. chain humanoid); default: all")
    args = parser.parse_args(argv)
    chosen = scripts(args.names)
    if not chosen:
        parser.error(f"no benchmark script matches {args.names}; available: {[p.stem for p in scripts()]}")
    extra = (["--quick"] if args.quick else []) + (["--profile"] if args.profile else [])
    if args.repeats is not None:
        extra += ["--repeats", str(args.repeats)]
    failed = []
    for path in chosen:
        print(f"### {path.name} {' '.join(extra)}".rstrip(), flush=True)
        t0 = time.perf_counter()
        code = subprocess.run([sys.executable, str(path), *extra], cwd=HERE.parent).returncode
        print(f"### {path.name}: exit {code} after {time.perf_counter() - t0:.1f} s\n", flush=True)
        if code != 0:
            failed.append(path.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"all {len(chosen)} benchmark scripts ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
