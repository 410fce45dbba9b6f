"""Old import path, kept working: ``fabrik3d.chain`` is now ``fabrik3d.solver.chain``."""

from fabrik3d.solver.chain import BEND_DEG, MAX_BENDS, STALL, STRAIGHT, ChainResult, run_chain, solve_chain

__all__ = ["BEND_DEG", "MAX_BENDS", "STALL", "STRAIGHT", "ChainResult", "run_chain", "solve_chain"]
