"""Baking scene files: one (``bake_scene_file``, what ``fabrik3d bake`` runs) or many
(``bake_many``), in this process or in parallel on a ``dask.distributed`` cluster.

Each scene is baked exactly as ``fabrik3d bake SCENE -o OUT`` bakes it (the same function), so the
outputs are byte-identical whatever runs them; each output is written atomically
(``fabrik3d.io.files``: no half file is ever visible) as ``OUT_DIR/<scene's stem><suffix>``. The whole
plan is checked first (``outputs_for``: no output replaces an input, no two scenes write one file).
A scene that fails is reported by name with its one-line error, and the others complete. On a cluster
each scene is one task, retried (``RETRIES``) when the worker running it is lost: a lost worker costs a
retry, never an output.

On a cluster the report is what is on disk: a worker bakes into a staged file beside the output
(``files.temp_name``: ``.NAME.PID.RANDOM.tmp``, PID this process's), and this process renames it to the
output when the task's result reaches it (``_commit``). A scene is reported baked exactly when its
complete output is there; a task whose result is lost (its scheduler died, the run was stopped) leaves
no output, even if its worker finishes later, only a staged file that the next bake of that output
removes (``files.remove_stale``). Dask is an optional extra (``pip install 'fabrik3d[scale]'``); without
a client nothing of it is imported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from fabrik3d import checks
from fabrik3d.io import bake, bake_file, files, outputs
from fabrik3d.io.scene import scene_or_preset
from fabrik3d.io.stage import stage_file
from fabrik3d.io.stage_bake import bake_stage_file, stage_animation

# Tries of a scene's task beyond the first when its worker is lost.
RETRIES = 2
SUFFIXES = (".glb", ".gltf", ".json")


@dataclasses.dataclass(frozen=True)
class Baked:
    """One scene's outcome: ``output`` written with ``frames`` poses (from frame ``first``, of ``joints``
    joints) at ``fps``, in ``seconds``; or ``error`` (one line) and no output."""

    scene: str
    output: str | None
    frames: int = 0
    fps: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    first: int = 0
    joints: int = 0


def bake_scene_file(
    scene: str,
    output: str | os.PathLike[str],
    frames: Any = None,
    method: str = "warm",
    fps: Any = None,
    backend: str = "numpy",
    kind: str | None = None,
) -> Baked:
    """Bake the keys of scene file (or preset) ``scene`` into ``output`` (``.glb``, ``.gltf`` or a take's
    ``.json``; ``kind``, one of those suffixes, where ``output``'s name does not end in it: a staged
    file), frames ``frames`` (``"a:b"``, a range or ``None``: the scene's), ``method`` ``"warm"`` or
    ``"batch"`` (on ``solve_batch``'s ``backend``), ``fps`` overriding the scene's; ``ValueError`` naming
    the scene, or when ``output`` is the scene file (``fabrik3d.io.outputs``)."""
    outputs.check_outputs([(output, scene)], [scene])
    t0 = time.perf_counter()
    several = stage_file(scene)
    if several is not None:  # figures and props: one file of them all (fabrik3d.io.stage_bake)
        if method != "warm" or backend != "numpy":
            raise ValueError(f"{checks.cut(scene)}: a stage of several figures bakes with --method warm on numpy")
        takes = bake_stage_file(several, output, frames, fps, kind)
        count = sum(len(f.scene.skeleton) for f in several.figures)
        rate = float(fps) if fps is not None else stage_animation(several).fps
        return Baked(scene, str(output), len(takes[0].times), rate, time.perf_counter() - t0, None,
                     _first(several, frames), count)  # fmt: skip
    loaded = scene_or_preset(scene)
    if loaded.animation is None or not loaded.animation.keys:
        raise ValueError(f"{checks.cut(scene)}: no keys to bake (a scene file of version 3 with an 'animation')")
    animation = loaded.animation
    if fps is not None:
        try:
            animation = dataclasses.replace(animation, fps=fps)
        except ValueError as exc:
            raise ValueError(f"--fps: {str(exc).removeprefix('fps: ')}") from None
    span = bake_file.bake_to_file(
        loaded.skeleton,
        animation,
        output,
        frames=frames,
        method=method,
        tolerance=loaded.tolerance,
        max_iterations=loaded.max_iterations,
        source=scene,
        backend=backend,
        kind=kind,
    )
    seconds = time.perf_counter() - t0
    return Baked(scene, str(output), len(span), float(animation.fps), seconds, None, span.start, len(loaded.skeleton))


def _first(stage: Any, frames: Any) -> int:
    return stage_animation(stage).start if frames is None else int(frames[0])


def outputs_for(scenes: Sequence[str], out_dir: str | os.PathLike[str], suffix: str = ".glb") -> list[Path]:
    """Where ``bake_many`` writes each scene: ``out_dir/<stem><suffix>``. The whole plan is checked here,
    before anything is written (``fabrik3d.io.outputs.check_outputs``).

    Raises:
        ValueError: when an output would replace one of the scenes (the same file: a symlink, another
            spelling of the path, ``--as json`` into the scenes' own folder), two scenes would write one
            file, ``out_dir`` is a file, or ``suffix`` is not one of ``SUFFIXES``.
    """
    if suffix not in SUFFIXES:
        raise ValueError(f"suffix: expected one of {', '.join(SUFFIXES)}, got {checks.quoted(suffix)}")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"{checks.cut(os.fspath(out_dir))}: not a folder (several scenes are baked into a folder)")
    paths = [Path(out_dir) / (Path(scene).stem + suffix) for scene in scenes]
    outputs.check_outputs(list(zip(paths, scenes)), scenes)
    return paths


def bake_many(
    scenes: Iterable[str],
    out_dir: str | os.PathLike[str],
    client: Any = None,
    *,
    suffix: str = ".glb",
    frames: Any = None,
    method: str = "warm",
    fps: Any = None,
    progress: Callable[[int, int, Baked], None] | None = None,
    backend: str = "numpy",
) -> list[Baked]:
    """Bake each of ``scenes`` (scene files or presets) into ``out_dir`` (module docstring), in this
    process (``client`` None) or as tasks of ``client`` (a ``dask.distributed.Client``);
    ``progress(done, total, baked)`` after each scene; ``method="batch"`` solves on ``solve_batch``'s
    ``backend`` (``"cpu"``, ``"cuda"``: the extra ``fabrik3d[fast]``, on the machine that bakes; checked
    here first). Returns one ``Baked`` per scene, in order: its ``output`` set exactly when that complete
    file is on disk, its ``error`` else (a scheduler lost mid-run fails the scenes not yet back).

    Raises:
        ValueError: for the plan (``outputs_for``) or the backend, before anything is written.
    """
    bake.check_backend(method, backend)
    names = [str(s) for s in scenes]
    paths = outputs_for(names, out_dir, suffix)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    total, results = len(names), {}
    if client is None:
        for k, (scene, path) in enumerate(zip(names, paths)):
            results[k] = _bake_one(scene, str(path), frames, method, fps, backend)
            if progress is not None:
                progress(len(results), total, results[k])
        return [results[k] for k in range(total)]
    from dask.distributed import as_completed  # (the optional extra: fabrik3d[scale])

    targets = [Path(os.path.realpath(path)) for path in paths]  # (a symlinked output: its file)
    for target in targets:
        files.remove_stale(target)  # (files staged by runs that are gone)
    staged = [files.temp_name(target, target.parent) for target in targets]
    futures: dict[Any, int] = {}
    try:
        for k, scene in enumerate(names):
            future = client.submit(_bake_one, scene, staged[k], frames, method, fps, backend, suffix,
                                   key=f"bake-{k}-{scene}", retries=RETRIES, pure=False)  # fmt: skip
            futures[future] = k
        for future in as_completed(futures):
            k = futures.pop(future)
            try:
                got = future.result()
            except Exception as exc:  # (a task that failed past its retries: the scene is reported, not the run)
                got = Baked(names[k], None, error=_one_line(f"{checks.cut(names[k])}: {type(exc).__name__}: {exc}"))
            with contextlib.suppress(Exception):  # (a result kept is recomputed when its worker is lost)
                future.release()
            results[k] = _commit(got, staged[k], paths[k], targets[k])
            if progress is not None:
                progress(len(results), total, results[k])
    except Exception as exc:  # (the client itself failed: the scenes not back are not baked)
        reason = _one_line(f"{type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        for k in range(total):
            results.setdefault(k, Baked(names[k], None, error=f"{checks.cut(names[k])}: not baked ({reason})"))
    finally:  # (uncommitted, or staged again by a task run twice; one still running may stage it later,
        for name in staged:  # and the next bake of its output removes it)
            _remove(name)
    return [results[k] for k in range(total)]


def _commit(baked: Baked, staged: str, path: Path, target: Path) -> Baked:
    """The task's outcome made what is on disk: its staged file renamed to ``target`` (the output
    ``path``, a symlink followed; a file there keeps its mode), or the scene reported not baked."""
    if baked.error is not None:
        _remove(staged)
        return baked
    if not os.path.isfile(staged):
        return Baked(
            baked.scene,
            None,
            error=f"{checks.cut(baked.scene)}: its worker wrote {checks.cut(staged)}, which this machine does "
            "not see: give -o a folder that every worker shares",
        )
    try:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(staged, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(staged, target)
    except OSError as exc:
        _remove(staged)
        return Baked(baked.scene, None, error=f"{checks.cut(str(path))}: cannot write ({exc.strerror or exc})")
    return dataclasses.replace(baked, output=str(path))


def _bake_one(
    scene: str, output: str, frames: Any, method: str, fps: Any, backend: str = "numpy", kind: str | None = None
) -> Baked:
    """One scene's bake, its error caught as a ``Baked`` (a task's function: run by workers)."""
    try:
        return bake_scene_file(scene, output, frames, method, fps, backend, kind)
    except (ValueError, OSError, MemoryError) as exc:
        message = _one_line(str(exc))
        if not message.startswith(Path(scene).name) and checks.cut(scene) not in message:
            message = f"{checks.cut(scene)}: {message}"
        return Baked(scene, None, error=message[:1000])


def _one_line(text: str) -> str:
    """``text`` on one line (a dask error may span several), at most 1000 characters."""
    return " ".join(text.split())[:1000]


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
