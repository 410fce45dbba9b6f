"""The twin map: every scalar function or method of the solver with a vectorised twin in
``fabrik3d.batch``, and the constants each pair shares.

A *twin* is the batch form of a scalar function: it solves ``m`` problems at once on numpy
arrays (a batch vector is a tuple of three ``(m,)`` arrays, see ``fabrik3d.batch.math``) with
the scalar function's expressions in the scalar order, each branch taken per problem by a
mask, so that every problem gets the scalar function's floats (docs/batch.md states the
contract). A change to one side of a pair is a change to the other: ``TWINS`` says where.

``TWINS`` is the one table. Each entry is ``(scalar, batch, shared)``, dotted names:

* a pair: ``scalar`` the scalar function or method, ``batch`` its twin, ``shared`` the
  constants both use, each named where it is defined (once: the other side imports it);
* batch-only plumbing: ``scalar`` is ``None`` and ``shared`` holds one string, the reason
  (bookkeeping of live problems, argument checks, masks) that it has no scalar twin.

Functions the batch code calls as they are (``solver.chain.stalled`` and ``settled``,
``solver.constrained.attempt.slowed``, ``solver.constrained.damped.joint_turns``,
``PoleTurns.pole_chain``, the arithmetic of ``fabrik3d.rotations`` on batch tuples) need no
twin: they are one function for both. ``tests/batch/test_twins.py`` checks the table against
the code.

A scalar function may also have one *compiled* twin, in ``fabrik3d.batch.kernels`` (a chain),
``kernels_tree`` (several targets) or ``kernels_frames`` (the frames): the same
expressions per problem, on scalars, compiled with numba for ``solve_batch``'s ``backend="cpu"``
and ``"cuda"`` (``fabrik3d.batch.backends``); the constrained solve's reaching passes, its damped
steps' rows and turn, Horn's fits and the limits' projections have theirs in ``kernels_passes``,
``kernels_turns``, ``kernels_rigid``, ``kernels_joints`` and ``kernels_limits`` (CPU only,
``fabrik3d.batch.compiled_passes``).

Riders (fingers) are carried by one function for both, ``fabrik3d.solver.riders.carry``, on any
batch shape.

Rolling joints (``Rig.rolls``: ``roll_for_hinge``, the roll a damped step keeps) have their twins too.
Turns carried through a solve (``solve``'s ``rotations`` and ``relax_rotations``:
``ReachingPasses.carry``, the twists ``aim_frame``, ``effector_frame`` and ``DampedSteps.turn``
keep), the hip hinge (``fabrik3d.solver.hinge``) and the look (``look_at``) have no twin yet:
``solve_batch`` solves such problems one by one with ``solve``, and the natural posing's always;
without them the twins' floats are the scalar functions' as before.
"""

from __future__ import annotations

_R = "fabrik3d.rotations"
_S = "fabrik3d.solver"
_B = "fabrik3d.batch"
_SC = "fabrik3d.solver.constrained"
_BC = "fabrik3d.batch.constrained"
_TINY2 = f"{_R}.TINY2"

TWINS: tuple[tuple[str | None, str, tuple[str, ...]], ...] = (
    # -- the entry points --------------------------------------------------------------------------
    (f"{_S}.tree.solve", f"{_B}.solve.solve_batch", ()),
    (f"{_S}.riders.solve_riding", f"{_B}.riders.riding", ()),
    # -- the plain solve: chain, tree, frames ------------------------------------------------------
    (f"{_S}.chain.run_chain", f"{_B}.chain.solve_chains", (_TINY2, f"{_S}.chain.MAX_BENDS", f"{_S}.chain.STRAIGHT")),
    (f"{_S}.chain._bend_if_straight", f"{_B}.chain._straight", (_TINY2, f"{_S}.chain.STRAIGHT")),
    # -- the compiled backends' kernel: run_chain per problem (with _toward, _bend_if_straight inside) --
    (
        f"{_S}.chain.run_chain",
        f"{_B}.kernels.build",
        (_TINY2, f"{_S}.chain.STALL", f"{_S}.chain.MAX_BENDS", f"{_S}.chain.STRAIGHT", f"{_S}.chain.BEND_DEG"),
    ),
    (f"{_S}.chain._bend_if_straight", f"{_B}.kernels.arc_table", (f"{_S}.chain.BEND_DEG",)),
    (f"{_S}.chain._toward", f"{_B}.kernels.landing", (_TINY2,)),
    (f"{_S}.tree._start_pose", f"{_B}.tree.start_pose", ()),
    (f"{_S}.rig.Rig.bone_pose", f"{_B}.tree.start_pose", (_TINY2,)),
    (f"{_S}.tree._solve_tree", f"{_B}.tree.solve_tree", (_TINY2,)),
    # -- the compiled backends' tree kernel: solve_tree's steps per problem ---------------------------
    (f"{_S}.tree._solve_tree", f"{_B}.kernels_tree.build_tree", (_TINY2, f"{_S}.chain.STALL")),
    (f"{_S}.tree._finish", f"{_B}.frames.finish", ()),
    # -- the compiled frames: _finish where every joint moved (Rig.swing_frame, rotations.swing inside) --
    (f"{_S}.tree._finish", f"{_B}.kernels_frames.build_frames", ()),
    # -- the compiled constrained kernels: the passes, the damped steps' rows and turn, the limits --------
    (f"{_SC}.passes.ReachingPasses.stage1", f"{_B}.kernels_passes.build_passes", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.stage2", f"{_B}.kernels_passes.build_passes", (f"{_R}.Y_AXIS",)),
    (
        f"{_SC}.passes.ReachingPasses.swivel_for_hinge",
        f"{_B}.kernels_passes.build_passes",
        (f"{_SC}.passes.SWIVEL_MISFIT", f"{_SC}.passes.SWIVELS", f"{_SC}.passes.SWIVEL_REFINE"),
    ),
    (f"{_SC}.passes.ReachingPasses.limit_frame", f"{_B}.kernels_joints.build_joints", ()),
    (f"{_SC}.passes.ReachingPasses.rigid_turn", f"{_B}.kernels_joints.build_joints", (f"{_R}.X_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.effector_frame", f"{_B}.kernels_joints.build_joints", (f"{_R}.Y_AXIS",)),
    # (Horn's fit of a rigid joint with three or more kids, around numpy's eigh: its matrix, then the rest)
    (f"{_R}.fit_rotation", f"{_B}.kernels_rigid.build_fit_matrix", ()),
    (f"{_SC}.passes.ReachingPasses.rigid_stage1", f"{_B}.kernels_rigid.build_fit_finish", ()),
    (f"{_SC}.damped.DampedSteps.turn", f"{_B}.kernels_turns.build_turns", ()),
    (f"{_SC}.damped.DampedSteps.turning_axes", f"{_B}.kernels_turns.build_rows", (f"{_SC}.damped.WORLD_AXES",)),
    (f"{_S}.limits.SwingLimit.project", f"{_B}.kernels_limits.build_limits", (f"{_S}.limits.ELLIPSE_STEPS",)),
    (f"{_R}.swing", f"{_B}.kernels_limits.build_limits", (f"{_R}.OPPOSITE2", f"{_R}.TINY2")),
    # -- rotations -----------------------------------------------------------------------------------
    (f"{_R}.unit", f"{_B}.math.unit", (_TINY2,)),
    (f"{_R}._perpendicular", f"{_B}.math._perpendicular", ()),
    (f"{_R}.swing", f"{_B}.math.swing", (f"{_R}.OPPOSITE2",)),
    (f"{_R}.normalize_quat", f"{_B}.math.normalize_quat", (f"{_R}.IDENTITY",)),
    (f"{_R}.axis_angle", f"{_B}.math.axis_angle", ()),
    (f"{_R}.twist_angle", f"{_B}.math.twist_angle", ()),
    (f"{_R}.fit_rotation", f"{_B}.math.fit_rotation", ()),
    (f"{_R}.mul", f"{_B}.math.mul", ()),
    (f"{_R}.rotate", f"{_B}.math.rotate", ()),
    (f"{_R}.dist", f"{_BC}.damped.dist", ()),
    # -- the limits' projections --------------------------------------------------------------------
    (f"{_S}.limits.clamp_angle", f"{_B}.limits.clamp_angle", ()),
    (f"{_S}.limits.SwingLimit.project", f"{_B}.limits.project", ()),
    (f"{_S}.limits._BoundCone.project", f"{_B}.limits._project_cone", ()),
    (f"{_S}.limits._BoundEllipse.project", f"{_B}.limits._project_ellipse", ()),
    (f"{_S}.limits._BoundHinge.project", f"{_B}.limits._project_hinge", ()),
    (f"{_S}.limits._BoundHinge.angle", f"{_B}.limits._hinge_angle", ()),
    (f"{_S}.limits._inside_ellipse", f"{_B}.limits._inside_ellipse", (f"{_S}.limits._TINY_ANGLE",)),
    (f"{_S}.limits.nearest_on_ellipse", f"{_B}.limits.nearest_on_ellipse", (f"{_S}.limits._TINY_ANGLE",)),
    (f"{_S}.limits.ellipse_root", f"{_B}.limits._newton", (f"{_S}.limits.ELLIPSE_STEPS",)),
    # -- the constrained solve: entry, restarts, retries --------------------------------------------
    (
        f"{_SC}.solve.LimitedSolve.run",
        f"{_BC}.solve.solve",
        (f"{_SC}.attempt.STALL_RUN", f"{_SC}.solve.RESTART_RUN", f"{_SC}.solve.RESTART_GAIN"),
    ),
    (
        f"{_SC}.solve.LimitedSolve.restarts",
        f"{_BC}.solve.restarts",
        (
            f"{_SC}.solve.MAX_RESTARTS",
            f"{_SC}.solve.RESTART_SEED",
            f"{_SC}.solve.RESTART_RUN",
            f"{_SC}.solve.RESTART_GAIN",
            f"{_SC}.attempt.STALL_RUN",
        ),
    ),
    (
        f"{_SC}.solve.LimitedSolve.warm_retries",
        f"{_BC}.solve.warm_retries",
        (f"{_SC}.solve.FALLBACK_ITERATIONS", f"{_SC}.solve.RESTART_RUN", f"{_SC}.solve.RESTART_GAIN"),
    ),
    (f"{_SC}.solve.LimitedSolve.place_untargeted", f"{_BC}.solve.place_untargeted", ()),
    (f"{_SC}.solve.LimitedSolve.project", f"{_BC}.passes.BatchPasses.project", ()),
    # -- the attempt and its residuals ----------------------------------------------------------------
    (
        f"{_SC}.attempt.Attempts.attempt",
        f"{_BC}.attempt.BatchLimited.attempt",
        (
            f"{_SC}.attempt.DAMPED_STEPS",
            f"{_SC}.attempt.FABRIK_GAIN",
            f"{_SC}.attempt.MIN_DAMPING",
            f"{_SC}.attempt.MAX_DAMPING",
            f"{_SC}.attempt.SLOW_GAIN",
            f"{_SC}.attempt.YIELD_AFTER",
            f"{_SC}.damped.ORIENTATION_IN_FORCE",
        ),
    ),
    (f"{_SC}.attempt.stalled", f"{_BC}.attempt.stalled", (f"{_SC}.attempt.LIMITED_STALL",)),
    (
        f"{_SC}.attempt.Attempts.residuals",
        f"{_BC}.damped.BatchDampedSteps.errors",
        (f"{_SC}.damped.ORIENTATION_IN_FORCE",),
    ),
    (f"{_SC}.attempt.Attempts.full_error", f"{_BC}.damped.BatchDampedSteps.largest_error", ()),
    (f"{_SC}.attempt.Attempts.position_error", f"{_BC}.damped.BatchDampedSteps.position_error", ()),
    (f"{_SC}.attempt.Attempts.rank", f"{_BC}.damped.BatchDampedSteps.rank", ()),
    # -- the reaching passes and frames ---------------------------------------------------------------
    (f"{_SC}.passes.ReachingPasses.stage1", f"{_BC}.passes.BatchPasses.stage1", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.reach_inward", f"{_BC}.passes.BatchPasses.reach_inward", ()),
    (f"{_SC}.passes.ReachingPasses.rigid_stage1", f"{_BC}.passes.BatchPasses.rigid_stage1", ()),
    (f"{_SC}.passes.ReachingPasses.rigid_turn", f"{_BC}.passes.BatchPasses.rigid_turn", (f"{_R}.X_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.stage2", f"{_BC}.passes.BatchPasses.stage2", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.aim_frame", f"{_BC}.passes.BatchPasses.aim_frame", ()),
    (f"{_SC}.passes.ReachingPasses.roll_for_hinge", f"{_BC}.hinges.BatchHinges.roll_for_hinge", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.roll_for_hinge", f"{_B}.kernels_passes.build_passes", (f"{_R}.Y_AXIS",)),
    (
        f"{_SC}.passes.ReachingPasses.swivel_for_hinge",
        f"{_BC}.hinges.BatchHinges.swivel_for_hinge",
        (f"{_SC}.passes.SWIVEL_MISFIT", f"{_SC}.passes.SWIVELS", f"{_SC}.passes.SWIVEL_REFINE"),
    ),
    (f"{_SC}.passes.ReachingPasses.effector_frame", f"{_BC}.passes.BatchPasses.effector_frame", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.passes.ReachingPasses.limit_frame", f"{_BC}.passes.BatchPasses.limit_frame", ()),
    (f"{_S}.rig.Rig.pose_frames", f"{_BC}.passes.BatchPasses.pose_frames", ()),
    (f"{_S}.rig.Rig.swing_frame", f"{_BC}.passes.BatchPasses.swing_frame", ()),
    # -- the damped steps ----------------------------------------------------------------------------
    (f"{_SC}.damped.DampedSteps.twist_excess", f"{_BC}.damped.BatchDampedSteps.twist_excess", (f"{_R}.Y_AXIS",)),
    (f"{_SC}.damped.DampedSteps.forward", f"{_BC}.damped.BatchDampedSteps.forward", ()),
    (
        f"{_SC}.damped.DampedSteps.turning_axes",
        f"{_BC}.damped.BatchDampedSteps.turning_axes",
        (f"{_SC}.damped.WORLD_AXES",),
    ),
    (f"{_SC}.damped.DampedSteps.frame_spins", f"{_BC}.damped.BatchDampedSteps.frame_spins", ()),
    (
        f"{_SC}.damped.DampedSteps.damped_step",
        f"{_BC}.damped.BatchDampedSteps.damped_step",
        (f"{_SC}.damped.ORIENTATION_IN_FORCE", f"{_SC}.damped.TWIST_NEAR"),
    ),
    # (a joint's turn, limited: the scalar step's ``turn`` calls it joint by joint, the batch step turns inline)
    (f"{_SC}.damped.DampedSteps.turned_local", f"{_BC}.damped.BatchDampedSteps.damped_step", ()),
    # -- the pole turns --------------------------------------------------------------------------------
    (f"{_SC}.poles.PoleTurns.apply_poles", f"{_BC}.poles.BatchPoleTurns.apply_poles", ()),
    (f"{_SC}.poles.PoleTurns.swing_chain_to_pole", f"{_BC}.poles.BatchPoleTurns.swing_chain_to_pole", ()),
    (f"{_SC}.poles.PoleTurns.final_poles", f"{_BC}.poles.BatchPoleTurns.final_poles", (f"{_SC}.poles.FINAL_SHARES",)),
    (f"{_SC}.poles.PoleTurns.pole_side_count", f"{_BC}.poles.BatchPoleTurns.pole_side_count", ()),
    (f"{_SC}.poles._distance_to_line", f"{_BC}.poles._distance_to_line", ()),
    # -- batch-only plumbing ---------------------------------------------------------------------------
    (None, f"{_B}.chain.LiveColumns.compact", ("the kernels' live columns: stopped problems leave the arrays",)),
    (None, f"{_B}.backends.check_backend", ("argument checks: the backend's name, numba and a GPU present",)),
    (None, f"{_B}.backends.solve_chains", ("the compiled backends' driver: arrays to and from kernels.build",)),
    (None, f"{_B}.backends.solve_trees", ("the compiled backends' driver: arrays to and from kernels_tree",)),
    (None, f"{_B}.kernels_tree.plan_arrays", ("the tree kernel's plan: tree.TreePlan as arrays",)),
    (None, f"{_B}.kernels_frames.frame_arrays", ("the frames kernel's rig constants as arrays",)),
    (None, f"{_B}.backends.frames", ("the compiled backends' driver: arrays to and from kernels_frames",)),
    (None, f"{_B}.backends.chain_launch", ("a compiled kernel's call: kernels.build's arguments",)),
    (None, f"{_B}.backends.tree_launch", ("a compiled kernel's call: kernels_tree.build_tree's arguments",)),
    (None, f"{_B}.backends.frames_launch", ("a compiled kernel's call: kernels_frames.build_frames' arguments",)),
    (None, f"{_B}.compiled.cpu", ("numba's builds of the kernels: the CPU runner over blocks",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.make", ("the compiled passes where the rig and targets are covered",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.reach", ("the compiled driver: batch tuples to and from kernels",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.project", ("the compiled driver: batch tuples to and from kernels",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.turn", ("the compiled driver: batch tuples to and from kernels",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.rows", ("the compiled driver: batch tuples to and from kernels",)),
    (None, f"{_BC}.passes.BatchPasses.reach", ("an iteration's passes: numpy's two stages or the compiled ones",)),
    (
        None,
        f"{_BC}.passes.BatchPasses.place_rigid",
        ("stage 2 of a rigid joint, split out of BatchPasses.stage2",),
    ),
    (None, f"{_B}.kernels_joints.rig_arrays", ("the constrained kernels' rig constants as arrays",)),
    (None, f"{_B}.kernels_limits.limit_arrays", ("the kernels' swing limits as kinds and rows of floats",)),
    (None, f"{_B}.kernels_limits.limit_row", ("one swing limit as a kind and a row of floats",)),
    (None, f"{_B}.kernels_passes.plan_arrays", ("the passes kernel's plan: a LimitedPlan's orders and kids",)),
    (None, f"{_B}.compiled.cuda", ("numba's builds of the kernels: GPU threads taking problems from a queue",)),
    (None, f"{_B}.kernels.in_order", ("the next problem a CPU block's lane takes: its own range, in order",)),
    (None, f"{_B}.compiled.from_queue", ("the next problem a GPU thread takes: the shared queue's",)),
    (None, f"{_B}.backends.cuda_threads", ("how many GPU threads the queue's problems are shared among",)),
    (None, f"{_B}.backends.cuda_arguments", ("a compiled kernel's arguments on the GPU: copied, lane state made",)),
    (None, f"{_B}.chain.blocks", ("views of preallocated scratch for the live columns",)),
    (None, f"{_B}.workers.one_by_one", ("solve itself once per problem: the arguments per problem, the results",)),
    (None, f"{_B}.workers.solve_each", ("solve itself once per problem, here or dealt out to worker processes",)),
    (None, f"{_B}.workers.deal", ("problems dealt out to worker processes, each running solve itself",)),
    (None, f"{_B}.workers.solve_share", ("solve itself on a worker's share of the problems",)),
    (None, f"{_B}.workers.serve", ("a worker process's loop: pickles in, solve itself, pickles out",)),
    (None, f"{_B}.workers.backend_workers", ("how many worker processes a backend's one-by-one problems use",)),
    (None, f"{_B}.inputs.batch_targets", ("argument checks: solve checks one problem (model.targets.goals)",)),
    (None, f"{_B}.inputs.named_points", ("argument checks: solve checks one problem (model.targets.pole_points)",)),
    (None, f"{_B}.inputs.batch_array", ("argument checks: (B, ...) float arrays, finite and bounded",)),
    (None, f"{_B}.inputs.quaternions", ("argument checks: (B, 4) unit quaternions (targets.unit_quaternion)",)),
    (None, f"{_B}.inputs.quaternion_lengths", ("the lengths targets.unit_quaternion measures, per problem",)),
    (None, f"{_B}.inputs.unit_turns", ("orientations normalised once, as fabrik3d.Target does",)),
    (None, f"{_B}.inputs.batch_size", ("the common batch size of the arguments",)),
    (None, f"{_B}.inputs.no_batch", ("the error for arguments without a batch axis",)),
    (None, f"{_B}.math.atan2", ("math.atan2 per element (numpy's arctan2 rounds differently)",)),
    (None, f"{_B}.math.acos", ("math.acos per element (numpy's arccos rounds differently)",)),
    (None, f"{_B}.math.pick", ("a branch taken per problem: a mask picks one side",)),
    (None, f"{_B}.math.full", ("batch tuples broadcast to one shape",)),
    (None, f"{_B}.math.changed", ("the batch form of != on tuples",)),
    (None, f"{_B}.math.unit_or", ("the batch form of the idiom rotations.unit(v) or fallback",)),
    (None, f"{_BC}.attempt.BatchLimited.aims", ("the live problems' targets (the scalar solve has one problem's)",)),
    (None, f"{_BC}.attempt.BatchLimited.aim", ("the live problems' targets (the scalar solve has one problem's)",)),
    (None, f"{_BC}.attempt.BatchLimited.narrowed", ("the targets of a subset of the problems, for a block",)),
    (None, f"{_BC}.attempt.BatchLimited.turn_to_poles", ("the attempt's pole turn, on the problems whose poles act",)),
    (None, f"{_BC}.attempt.Aims.take", ("per-problem state: a subset",)),
    (None, f"{_BC}.attempt.Carry.fresh", ("per-problem state carried from attempt to attempt",)),
    (None, f"{_BC}.attempt.Carry.copy", ("per-problem state carried from attempt to attempt",)),
    (None, f"{_BC}.attempt.Carry.take", ("per-problem state: a subset",)),
    (None, f"{_BC}.attempt.Carry.put", ("per-problem state: a subset written back",)),
    (None, f"{_BC}.attempt.ranks_below", ("Python's tuple order of rank() results, per problem",)),
    (None, f"{_BC}.damped.BatchDampedSteps.column_points", ("damped_step's Jacobian columns, gathered",)),
    (None, f"{_BC}.damped.BatchDampedSteps.position_rows", ("damped_step's rows of the positions, split out of it",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.aims", ("the kernels' orientation targets, as arrays",)),
    (None, f"{_B}.compiled_passes.CompiledPasses.targets", ("the kernels' target positions, as arrays",)),
    (None, f"{_BC}.damped.BatchDampedSteps.orientation_rows", ("damped_step's orientation rows, per problem",)),
    (None, f"{_BC}.subsets.take", ("per-problem subsets of batch tuples",)),
    (None, f"{_BC}.subsets.full", ("batch tuples broadcast to m problems",)),
    (None, f"{_BC}.subsets.put", ("per-problem subsets of batch tuples written back",)),
    (None, f"{_BC}.subsets.take_all", ("per-problem subsets of poses",)),
    (None, f"{_BC}.subsets.put_all", ("per-problem subsets of poses written back",)),
    (None, f"{_BC}.hinges.BatchHinges.misfit", ("swivel_for_hinge's local misfit(), for every problem at once",)),
    (None, f"{_BC}.hinges.BatchHinges.swivelled", ("swivel_for_hinge's local turned(), all twelve turns at once",)),
    (None, f"{_BC}.poles.PoleMarks.empty", ("the scalar solve's pole sets as per-problem masks",)),
    (None, f"{_BC}.poles.PoleMarks.arrays", ("the scalar solve's pole sets as per-problem masks",)),
    (None, f"{_BC}.poles.PoleMarks.copy", ("the scalar solve's pole sets as per-problem masks",)),
    (None, f"{_BC}.poles.PoleMarks.take", ("per-problem state: a subset",)),
    (None, f"{_BC}.poles.PoleMarks.put", ("per-problem state: a subset written back",)),
)
