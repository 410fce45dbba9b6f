"""Baking scene files: one (``bake_scene_file``, what ``fabrik3d bake`` runs) or many
(``bake_many``), in this process or in parallel on a ``dask.distributed`` cluster.

Each scene is baked exactly as ``fabrik3d bake SCENE -o OUT`` bakes it (the same function), so the
outputs are byte-identical whatever runs them; each output is written atomically
(``fabrik3d.io.files``: no half file is ever visible) as ``OUT_DIR/<scene's stem><suffix>``. A scene
that fails is reported by name with its one-line error, and the others complete. On a cluster each
scene is one task, retried (``RETRIES``) when the worker running it is lost: a lost worker costs a
retry, never an output. Dask is an optional extra (``pip install 'fabrik3d[scale]'``); without a
client nothing of it is imported.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from fabrik3d import checks
from fabrik3d.io import bake, bake_file
from fabrik3d.io.scene import scene_or_preset

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
) -> Baked:
    """Bake the keys of scene file (or preset) ``scene`` into ``output`` (``.glb``, ``.gltf`` or a take's
    ``.json``), frames ``frames`` (``"a:b"``, a range or ``None``: the scene's), ``method``
    ``"warm"`` or ``"batch"`` (on ``solve_batch``'s ``backend``), ``fps`` overriding the scene's;
    ``ValueError`` naming the scene."""
    t0 = time.perf_counter()
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
    )
    seconds = time.perf_counter() - t0
    return Baked(scene, str(output), len(span), float(animation.fps), seconds, None, span.start, len(loaded.skeleton))


def outputs_for(scenes: Sequence[str], out_dir: str | os.PathLike[str], suffix: str = ".glb") -> list[Path]:
    """Where ``bake_many`` writes each scene: ``out_dir/<stem><suffix>``; ``ValueError`` when two scenes
    would write one file or the suffix is not one of ``SUFFIXES``."""
    if suffix not in SUFFIXES:
        raise ValueError(f"suffix: expected one of {', '.join(SUFFIXES)}, got {checks.quoted(suffix)}")
    out, seen = [], {}
    for scene in scenes:
        path = Path(out_dir) / (Path(scene).stem + suffix)
        if path in seen:
            raise ValueError(f"{checks.cut(scene)} and {checks.cut(seen[path])} would both write {path.name}")
        seen[path] = scene
        out.append(path)
    return out


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
    here first). Returns one ``Baked`` per scene, in order."""
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

    futures = {
        client.submit(_bake_one, scene, str(path), frames, method, fps, backend, key=f"bake-{k}-{scene}",
                      retries=RETRIES, pure=False): k
        for k, (scene, path) in enumerate(zip(names, paths))
    }  # fmt: skip
    for future in as_completed(futures):
        k = futures[future]
        try:
            results[k] = future.result()
        except Exception as exc:  # (a task that failed past its retries: the scene is reported, not the run)
            results[k] = Baked(names[k], None, error=f"{checks.cut(names[k])}: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress(len(results), total, results[k])
    return [results[k] for k in range(total)]


def _bake_one(scene: str, output: str, frames: Any, method: str, fps: Any, backend: str = "numpy") -> Baked:
    """One scene's bake, its error caught as a ``Baked`` (a task's function: run by workers)."""
    try:
        return bake_scene_file(scene, output, frames, method, fps, backend)
    except (ValueError, OSError, MemoryError) as exc:
        message = " ".join(str(exc).split())
        if not message.startswith(Path(scene).name) and checks.cut(scene) not in message:
            message = f"{checks.cut(scene)}: {message}"
        return Baked(scene, None, error=message[:1000])
