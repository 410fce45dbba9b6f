"""Copy, paste and the pose library in the web UI, without the UI (``fabrik3d.capture_pose``,
``fabrik3d.apply_pose``, ``fabrik3d.io.pose_library``).

``Poses`` is a part of ``fabrik3d_web.document.controller.Controller``. Poses are kept by role, so a pose
copied (or saved) on the humanoid pastes (or applies) onto a character, and back. Copy takes the
pose shown, or only one limb (an arm with its fingers, a leg, the spine and head); paste applies
it to the pose shown at the current frame, mirrored if asked: the pose the user built, as a turn
(``Turning.pose_to``): one undo step, keyed by K as any pose (Blender's way: paste changes the
pose, K keys it). The library (``library_path``) is a database of named poses, by default
``~/.fabrik3d/poses.db`` (its folder made on the first save; an older default ``poses.json`` there is
imported into it once, and kept), or a JSON library file (``fabrik3d.io.pose_library``); the panel
reads it a page (``PAGE_SIZE`` names and thumbnails) at a time, and an apply reads only that pose. The
starter poses shipped with the package follow each page. A library pose applies to the whole body or
chosen parts, mirrored, blended.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fabrik3d
from fabrik3d import checks
from fabrik3d.io import pose_library
from fabrik3d.model.pose_library import PARTS, Pose, part_of

DEFAULT_LIBRARY = Path("~") / ".fabrik3d" / "poses.db"
# The default library before it was a database: imported into ``DEFAULT_LIBRARY`` once (never deleted).
OLD_DEFAULT = Path("~") / ".fabrik3d" / "poses.json"
PAGE_SIZE = pose_library.PAGE_SIZE
NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS, Windows: a longer one is never a file)
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
        library_path: the library file; library_offset: the first row (0-based) of the page shown,
        library_total: how many saved poses the library held when it was last read.
    """

    scene: Any
    result: fabrik3d.SolveResult
    character: Any
    clipboard: Pose | None = None
    clipboard_what = ""
    library_path: Path = DEFAULT_LIBRARY.expanduser()
    library_offset = 0
    library_total = 0

    pose_to: Callable[..., None]  # (the Turning part's)

    # -- copy and paste -----------------------------------------------------------------------
    def copy_pose(self, limb: Any = "") -> None:
        """Copy the pose shown, or only ``limb`` (an effector's name: its arm with the fingers, its
        leg, or the head's spine) when it names one."""
        role = self._role_of(limb)
        pose = self._capture()
        self.clipboard_what = self.copy_scope(limb)
        if role in LIMBS:
            parts, side, _ = LIMBS[role]
            keep = {r for r in pose.bones if part_of(r) in parts and r.endswith(side)}
            spine = parts == ("spine",)
            pose = Pose(
                {r: v for r, v in pose.bones.items() if r in keep},
                {r: v for r, v in pose.twists.items() if r in keep},
                pose.pelvis if spine else None,
                pose.height if spine else None,
            )
        self.clipboard = pose

    def copy_scope(self, limb: Any = "") -> str:
        """What ``copy_pose(limb)`` takes, in words: "the left arm", ..., or "the whole pose"."""
        role = self._role_of(limb)
        return LIMBS[role][2] if role in LIMBS else "the whole pose"

    def paste_pose(self, mirrored: Any = False) -> None:
        """Apply the copied pose to the pose shown (``mirrored``: left and right swapped); one undo step."""
        if self.clipboard is None:
            raise ValueError("paste: nothing copied yet (Ctrl+C copies the pose)")
        self._apply_pose(self.clipboard, None, mirrored is True, 1.0)

    # -- the library --------------------------------------------------------------------------
    def set_library_path(self, path: Any) -> None:
        """Use the library ``path`` (``~`` expanded): a ``.json`` file, a database (``.db``, ``.sqlite``,
        ``.sqlite3``), or a folder: its ``poses.db`` when it holds one, else its ``poses.json``. The
        page shown goes back to the first."""
        if not isinstance(path, str) or not path.strip() or len(path) > 1000 or "\0" in path:
            raise ValueError(f"pose library: expected a file or folder, got {str(path)[:60]!r}")
        p = Path(path.strip()).expanduser()
        if any(len(os.fsencode(part)) > NAME_MAX for part in p.parts):
            raise ValueError(f"{checks.cut(str(p))}: a file or folder name is at most {NAME_MAX} bytes")
        if os.path.isdir(p) or not (p.suffix.lower() == ".json" or pose_library.is_database(p)):
            p = p / "poses.db" if os.path.isfile(p / "poses.db") else p / "poses.json"
        self.library_path = p
        self.library_offset = 0

    def set_library_offset(self, offset: Any) -> None:
        """Show the page of saved poses from row ``offset`` (0-based; past the end: the last page)."""
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= pose_library.MAX_POSES:
            raise ValueError(f"pose library: a page starts at a row number, got {str(offset)[:40]!r}")
        self.library_offset = offset

    def library_rows(self) -> tuple[list[dict[str, Any]], str]:
        """The panel's list: the page of saved poses from ``library_offset`` (past the end: the last
        page), then the starter poses (``name``, ``saved``, ``thumbnail``: a PNG data URL or ""); and the
        library's problem ("" if none: a library not made yet has no poses). Sets ``library_offset``
        and ``library_total``."""
        try:
            page = self._page(self.library_offset)
            if not page.rows and page.total and self.library_offset:
                page = self._page((page.total - 1) // PAGE_SIZE * PAGE_SIZE)
            rows, problem = [_row(name, png, True) for name, png in page.rows], ""
            self.library_offset, self.library_total = page.offset, page.total
        except Exception as exc:  # (ValueError, or anything else a bad library causes: never past here)
            rows, problem = [], _one_line(exc)
            self.library_offset, self.library_total = 0, 0
        return rows + starter_rows(), problem

    def save_library_pose(self, name: Any, thumbnail: bytes | None = None) -> None:
        """Save the pose shown as ``name`` in the library (a pose of that name is replaced)."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("save pose: type a name for it first")
        path = self._library()
        if path == DEFAULT_LIBRARY.expanduser():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"{path.parent}: cannot make the library's folder ({exc.strerror or exc})") from None
        elif not os.path.isdir(path.parent):
            raise ValueError(f"{path}: the folder {path.parent} does not exist")
        fabrik3d.save_pose(path, name.strip(), self._capture(), thumbnail=thumbnail)

    def apply_library_pose(
        self, name: Any, saved: Any, parts: Any = None, mirrored: Any = False, amount: Any = 1.0
    ) -> None:
        """Apply the library pose ``name`` (``saved``: from the library, only that pose read; else a
        starter pose) to ``parts`` (a list of arms, legs, spine, hands; None: all), mirrored, by
        ``amount`` (0..1)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"apply pose: expected a pose's name, got {str(name)[:60]!r}")
        if parts is not None and (
            not isinstance(parts, list) or not all(isinstance(p, str) and p in PARTS for p in parts)
        ):
            raise ValueError(f"apply pose: parts are some of {', '.join(PARTS)}, got {str(parts)[:60]}")
        if parts == []:
            raise ValueError("apply pose: choose at least one part (arms, legs, spine, hands)")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not 0.0 <= amount <= 1.0:
            raise ValueError(f"apply pose: amount is a number from 0 to 1, got {str(amount)[:40]!r}")
        if saved is True:
            pose = pose_library.load_pose(self._library(), name)
        elif name in starter_poses():
            pose = starter_poses()[name]
        else:
            raise ValueError(f"the starter poses: no pose {name[:60]!r}")
        self._apply_pose(pose, parts, mirrored is True, float(amount))

    def delete_library_pose(self, name: Any) -> None:
        """Delete the saved pose ``name`` from the library file."""
        if not isinstance(name, str):
            raise ValueError(f"delete pose: expected a name, got {str(name)[:60]!r}")
        fabrik3d.delete_pose(self._library(), name)

    # -- internals ----------------------------------------------------------------------------
    def _library(self) -> Path:
        """The library's path, once the default database holds the old default JSON file's poses (an
        import the first time the default is used while ``OLD_DEFAULT`` exists; the file is kept)."""
        path, old = self.library_path, OLD_DEFAULT.expanduser()
        if path == DEFAULT_LIBRARY.expanduser() and not _exists(path) and _exists(old):
            try:
                pose_library.import_library(old, path, replace=False)
            except ValueError as exc:  # (nothing made: tried again next time, once the file is fixed or moved)
                raise ValueError(f"{exc} (the old default library, imported into {path.name} once)") from None
        return path

    def _page(self, offset: int) -> pose_library.LibraryPage:
        """A page of the library from ``offset`` (no rows while the library does not exist)."""
        path = self._library()
        if not _exists(path):
            return pose_library.LibraryPage(0, 0, ())
        return pose_library.library_page(path, offset, PAGE_SIZE)

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
_STARTER_ROWS: list[dict[str, Any]] = []


def starter_poses() -> dict[str, Pose]:
    """The starter library shipped with the package (read once)."""
    if not _STARTER:
        _STARTER.update(fabrik3d.starter_poses())
    return _STARTER


def starter_rows() -> list[dict[str, Any]]:
    """The panel's rows of the starter poses (made once; a copy)."""
    if not _STARTER_ROWS:
        _STARTER_ROWS.extend(_row(name, pose.thumbnail, False) for name, pose in starter_poses().items())
    return [dict(r) for r in _STARTER_ROWS]


def _row(name: str, png: bytes | None, saved: bool) -> dict[str, Any]:
    url = "" if png is None else "data:image/png;base64," + base64.b64encode(png).decode()
    return {"name": name, "saved": saved, "thumbnail": url, "key": ("saved:" if saved else "starter:") + name}


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; ``ValueError`` naming it when that cannot be told (a folder on the way
    that cannot be read, a name too long)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    return True


def _one_line(exc: BaseException) -> str:
    """``exc`` as one line: a ``ValueError``'s message, anything else's type and message."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, ValueError) and text else f"{type(exc).__name__}: {text}"
