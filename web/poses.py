"""Copy, paste and the pose library in the web UI, without the UI (``fabrik3d.capture_pose``,
``fabrik3d.apply_pose``, ``fabrik3d.io.pose_library``).

``Poses`` is a part of ``fabrik3d_web.controller.Controller``. Poses are kept by role, so a pose
copied (or saved) on the humanoid pastes (or applies) onto a character, and back. Copy takes the
pose shown, or only one limb (an arm with its fingers, a leg, the spine and head); paste applies
it to the pose shown at the current frame, mirrored if asked: the pose the user built, as a turn
(``Turning.pose_to``): one undo step, keyed by K as any pose (Blender's way: paste changes the
pose, K keys it). The library is a JSON file of named poses (``library_path``; by default
``~/.fabrik3d/poses.json``, its folder made on the first save) beside the starter poses shipped
with the package; a library pose applies to the whole body or chosen parts, mirrored, blended.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.model.pose_library import PARTS, Pose, part_of

DEFAULT_LIBRARY = Path("~") / ".fabrik3d" / "poses.json"
# What copy takes with one limb selected (the effector whose handle was grabbed last, by role):
# (parts, side) of the roles kept, and the limb's name.
LIMBS = {
    "hand_l": (("arms", "hands"), "_l", "the left arm"),
    "hand_r": (("arms", "hands"), "_r", "the right arm"),
    "toe_l": (("legs",), "_l", "the left leg"),
    "toe_r": (("legs",), "_r", "the right leg"),
    "foot_l": (("legs",), "_l", "the left leg"),
    "foot_r": (("legs",), "_r", "the right leg"),
    "head": (("spine",), "", "the spine and head"),
}


class Poses:
    """Copy, paste and the pose library (see the module docstring).

    Attributes:
        clipboard: the pose copied last (by role), or None; clipboard_what: what it holds, in words.
        library_path: the library file.
    """

    scene: Any
    result: fabrik3d.SolveResult
    character: Any
    clipboard: Pose | None = None
    clipboard_what = ""
    library_path: Path = DEFAULT_LIBRARY.expanduser()

    def pose_to(self, positions: np.ndarray, rotations: np.ndarray, *, undoable: bool = True) -> None:
        raise NotImplementedError  # (the Turning part's)

    # -- copy and paste -----------------------------------------------------------------------
    def copy_pose(self, limb: Any = "") -> None:
        """Copy the pose shown, or only ``limb`` (an effector's name: its arm with the fingers, its
        leg, or the head's spine) when it names one."""
        role = self._role_of(limb)
        pose = self._capture()
        if role in LIMBS:
            parts, side, self.clipboard_what = LIMBS[role]
            keep = {r for r in pose.bones if part_of(r) in parts and r.endswith(side)}
            spine = parts == ("spine",)
            pose = Pose(
                {r: v for r, v in pose.bones.items() if r in keep},
                {r: v for r, v in pose.twists.items() if r in keep},
                pose.pelvis if spine else None,
                pose.height if spine else None,
            )
        else:
            self.clipboard_what = "the whole pose"
        self.clipboard = pose

    def paste_pose(self, mirrored: Any = False) -> None:
        """Apply the copied pose to the pose shown (``mirrored``: left and right swapped); one undo step."""
        if self.clipboard is None:
            raise ValueError("paste: nothing copied yet (Ctrl+C copies the pose)")
        self._apply_pose(self.clipboard, None, mirrored is True, 1.0)

    # -- the library --------------------------------------------------------------------------
    def set_library_path(self, path: Any) -> None:
        """Use the library file ``path`` (``~`` expanded; a folder means its ``poses.json``)."""
        if not isinstance(path, str) or not path.strip() or len(path) > 1000:
            raise ValueError(f"pose library: expected a file or folder, got {str(path)[:60]!r}")
        p = Path(path.strip()).expanduser()
        if p.is_dir() or p.suffix.lower() != ".json":
            p = p / "poses.json"
        self.library_path = p

    def library_poses(self) -> dict[str, Pose]:
        """The saved poses (none while the file does not exist; ``ValueError`` for a bad file)."""
        if not self.library_path.exists():
            return {}
        return fabrik3d.load_library(self.library_path)

    def library_rows(self) -> tuple[list[dict[str, Any]], str]:
        """The panel's list: one row per saved pose, then per starter pose (``name``, ``saved``,
        ``thumbnail``: a PNG data URL or ""); and the library file's problem ("" if none)."""
        try:
            saved, problem = self.library_poses(), ""
        except ValueError as exc:
            saved, problem = {}, str(exc)
        rows = [_row(name, pose, True) for name, pose in saved.items()]
        return rows + [_row(name, pose, False) for name, pose in starter_poses().items()], problem

    def save_library_pose(self, name: Any, thumbnail: bytes | None = None) -> None:
        """Save the pose shown as ``name`` in the library (a pose of that name is replaced)."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("save pose: type a name for it first")
        path = self.library_path
        if path == DEFAULT_LIBRARY.expanduser():
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise ValueError(f"{path}: the folder {path.parent} does not exist")
        fabrik3d.save_pose(path, name.strip(), self._capture(), thumbnail=thumbnail)

    def apply_library_pose(
        self, name: Any, saved: Any, parts: Any = None, mirrored: Any = False, amount: Any = 1.0
    ) -> None:
        """Apply the library pose ``name`` (``saved``: from the library file, else a starter pose) to
        ``parts`` (a list of arms, legs, spine, hands; None: all), mirrored, by ``amount`` (0..1)."""
        poses = self.library_poses() if saved is True else starter_poses()
        if not isinstance(name, str) or name not in poses:
            where = self.library_path if saved is True else "the starter poses"
            raise ValueError(f"{where}: no pose {str(name)[:60]!r}")
        if parts is not None and (not isinstance(parts, list) or not set(parts) <= set(PARTS)):
            raise ValueError(f"apply pose: parts are some of {', '.join(PARTS)}, got {str(parts)[:60]}")
        if parts == []:
            raise ValueError("apply pose: choose at least one part (arms, legs, spine, hands)")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0.0 <= amount <= 1.0:
            raise ValueError(f"apply pose: amount is a number from 0 to 1, got {str(amount)[:40]!r}")
        self._apply_pose(poses[name], parts, mirrored is True, float(amount))

    def delete_library_pose(self, name: Any) -> None:
        """Delete the saved pose ``name`` from the library file."""
        if not isinstance(name, str):
            raise ValueError(f"delete pose: expected a name, got {str(name)[:60]!r}")
        fabrik3d.delete_pose(self.library_path, name)

    # -- internals ----------------------------------------------------------------------------
    def _rig_map(self) -> Any:
        return None if self.character is None else self.character.rig_map

    def _role_of(self, name: Any) -> str:
        roles = {} if self.character is None else {b: r for r, b in self.character.effectors.items()}
        return roles.get(name, name) if isinstance(name, str) else ""

    def _capture(self) -> Pose:
        r = self.result
        return fabrik3d.capture_pose(self.scene.skeleton, r.positions, r.rotations, self._rig_map())

    def _apply_pose(self, pose: Pose, parts: Any, mirrored: bool, amount: float) -> None:
        r = self.result
        p, q = fabrik3d.apply_pose(
            self.scene.skeleton, r.positions, r.rotations, pose, parts, mirrored, amount, self._rig_map()
        )
        self.pose_to(p, q)


_STARTER: dict[str, Pose] = {}


def starter_poses() -> dict[str, Pose]:
    """The starter library shipped with the package (read once)."""
    if not _STARTER:
        _STARTER.update(fabrik3d.starter_poses())
    return _STARTER


def _row(name: str, pose: Pose, saved: bool) -> dict[str, Any]:
    png = "" if pose.thumbnail is None else "data:image/png;base64," + base64.b64encode(pose.thumbnail).decode()
    return {"name": name, "saved": saved, "thumbnail": png, "key": ("saved:" if saved else "starter:") + name}
