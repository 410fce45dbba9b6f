"""Props: simple solid shapes (or a mesh file) in a stage, free or held by a figure's joint.

A prop's own frame has its origin at the shape's centre, +Y up its height. ``size`` is its extent
``(width x, height y, depth z)`` in metres before ``transform.scale``. A free prop's ``transform``
is in the world; a held one's (``parent``: a figure's joint) is relative to that joint's world frame
(``SolveResult.rotations``): Blender's child of a bone, so it follows every pose of the joint.

``prop_mesh`` gives a built-in shape's triangles; a ``"mesh"`` prop names a ``.glb``/``.gltf`` file
(relative to the stage file's folder), read by ``fabrik3d.io.prop_file``: ``prop_mesh`` given its
triangles (a ``Surface``) centres them on their bounding box and stretches them to the prop's ``size``
(which is the file's bounding box when the prop is made from it: ``mesh_size``); without them the prop
is its bounding box.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from fabrik3d import checks
from fabrik3d.model.placement import Transform

# The built-in shapes and their default sizes (width, height, depth), metres: a box; a block at chair
# height (to sit on); a ball; a stick (to hold); a capsule; a floor plane; a wall.
SHAPES: dict[str, tuple[float, float, float]] = {
    "box": (0.4, 0.4, 0.4),
    "block": (0.45, 0.45, 0.45),
    "sphere": (0.22, 0.22, 0.22),
    "cylinder": (0.03, 1.0, 0.03),
    "capsule": (0.1, 0.5, 0.1),
    "plane": (2.0, 0.01, 2.0),
    "wall": (2.0, 2.4, 0.1),
    "mesh": (1.0, 1.0, 1.0),
}
MAX_SIZE = 100.0  # metres: the largest extent of a prop
# Metres: a mesh thinner than this along an axis is flat there; its size there is FLAT, not stretched.
FLAT = 1e-3
MAX_NAME = 64
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,64}$")


def check_name(value: Any, where: str) -> str:
    """A figure's or prop's name: 1-64 printable characters, not blank."""
    if not isinstance(value, str) or not _NAME.match(value) or not value.strip():
        raise ValueError(f"{where}: expected a name of 1-{MAX_NAME} printable characters, got {checks.quoted(value)}")
    return value


@dataclass(frozen=True)
class Hold:
    """What holds a prop: joint ``joint`` of the figure named ``figure``."""

    figure: str
    joint: str

    def __post_init__(self) -> None:
        check_name(self.figure, "parent.figure")
        if not isinstance(self.joint, str) or not self.joint:
            raise ValueError(f"parent.joint: expected a joint's name, got {checks.quoted(self.joint)}")

    def to_dict(self) -> dict[str, Any]:
        return {"figure": self.figure, "joint": self.joint}


@dataclass(frozen=True, eq=False)  # (compared by identity: numpy fields)
class Prop:
    """A shape in the stage.

    Attributes:
        name: unique in its stage.
        shape: one of ``SHAPES``.
        size: ``(3,)`` extent in metres before the scale (default the shape's).
        transform: the prop's frame: in the world, or relative to ``parent``'s joint frame.
        parent: the joint that holds it, or None (it stays where it is).
        colour: ``(3,)`` RGB in 0..1.
        file: a ``"mesh"`` prop's ``.glb``/``.gltf``, relative to the stage file's folder.
    """

    name: str
    shape: str = "box"
    size: np.ndarray | None = None
    transform: Transform = field(default_factory=Transform)
    parent: Hold | None = None
    colour: np.ndarray = field(default_factory=lambda: np.array([0.55, 0.6, 0.68]))
    file: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "name")
        if self.shape not in SHAPES:
            raise ValueError(f"shape: expected one of {', '.join(SHAPES)}, got {checks.quoted(self.shape)}")
        size = SHAPES[self.shape] if self.size is None else self.size
        s = checks.point(size, "size")
        if np.any(s <= 0) or np.any(s > MAX_SIZE):
            raise ValueError(f"size: expected three extents above 0 and at most {MAX_SIZE:g} m, got {s.tolist()}")
        object.__setattr__(self, "size", s)
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform: expected a Transform, got {type(self.transform).__name__}")
        if self.parent is not None and not isinstance(self.parent, Hold):
            raise ValueError(f"parent: expected a Hold or None, got {type(self.parent).__name__}")
        c = checks.point(self.colour, "colour")
        if np.any(c < 0) or np.any(c > 1):
            raise ValueError(f"colour: expected three values in 0..1, got {c.tolist()}")
        object.__setattr__(self, "colour", c)
        if (self.shape == "mesh") != (self.file is not None):
            raise ValueError("file: a 'mesh' prop names its .glb or .gltf file, and only a 'mesh' prop does")
        if self.file is not None and (
            not isinstance(self.file, str) or not self.file.lower().endswith((".glb", ".gltf")) or len(self.file) > 1000
        ):
            raise ValueError(f"file: expected a .glb or .gltf file name, got {checks.quoted(self.file)}")

    @property
    def half_height(self) -> float:
        """Half the prop's height as placed, metres (where its centre stands above a floor it rests on)."""
        return float(self.size[1]) * self.transform.scale / 2

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "shape": self.shape, "size": [float(x) for x in self.size]}
        out.update(self.transform.to_dict())
        if self.parent is not None:
            out["parent"] = self.parent.to_dict()
        out["colour"] = [float(x) for x in self.colour]
        if self.file is not None:
            out["file"] = self.file
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Prop:
        """A prop from its JSON form (``to_dict``); ``ValueError`` naming the field."""
        if not isinstance(data, dict):
            raise ValueError("expected an object")
        unknown = set(data) - {"name", "shape", "size", "position", "rotation", "scale", "parent", "colour", "file"}
        if unknown:
            raise ValueError(f"unknown fields {sorted(map(str, unknown))[:5]}")
        parent = data.get("parent")
        if parent is not None:
            if not isinstance(parent, dict) or set(parent) != {"figure", "joint"}:
                raise ValueError('parent: expected {"figure": NAME, "joint": JOINT} or null')
            parent = Hold(parent["figure"], parent["joint"])
        transform = Transform(
            data.get("position", [0.0, 0.0, 0.0]), data.get("rotation", [0.0, 0.0, 0.0, 1.0]), data.get("scale", 1.0)
        )
        return cls(
            data.get("name"),  # type: ignore[arg-type]
            data.get("shape", "box"),
            data.get("size"),
            transform,
            parent,
            data.get("colour", [0.55, 0.6, 0.68]),
            data.get("file"),
        )


def standing(name: str, shape: str, x: float = 0.0, z: float = 0.0, floor: float = 0.0, **kw: Any) -> Prop:
    """A free prop of ``shape`` standing on the floor at height ``floor`` (metres) at ``(x, z)``: its
    bottom on the floor; a plane lies on it."""
    prop = Prop(name, shape, **kw)
    t = prop.transform
    return Prop(name, shape, prop.size, Transform((x, floor + prop.half_height, z), t.rotation, t.scale),
                None, prop.colour, prop.file)  # fmt: skip


class Surface(Protocol):
    """A mesh prop's triangles as its file gives them (``fabrik3d.io.prop_file.PropFile``): ``vertices``
    ``(n, 3)`` metres, ``triangles`` ``(t, 3)`` vertex indices (counter-clockwise seen from outside),
    ``normals`` ``(n, 3)`` or None."""

    @property
    def vertices(self) -> np.ndarray: ...

    @property
    def triangles(self) -> np.ndarray: ...

    @property
    def normals(self) -> np.ndarray | None: ...


def mesh_size(vertices: np.ndarray) -> np.ndarray:
    """The ``size`` ``(3,)`` (metres) of a mesh prop of ``vertices`` ``(n, 3)``: its bounding box, at least
    ``FLAT`` along each axis; ``ValueError`` when it is larger than ``MAX_SIZE``."""
    extent = np.ptp(np.asarray(vertices, dtype=float).reshape(-1, 3), axis=0)
    if not np.all(extent <= MAX_SIZE):
        raise ValueError(f"the mesh is {float(extent.max()):.4g} m across; a prop is at most {MAX_SIZE:g} m")
    return np.maximum(extent, FLAT)


def prop_mesh(
    prop: Prop, segments: int = 24, surface: Surface | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A prop's surface in its own frame, scaled by ``size`` (not by the transform): ``(vertices (m, 3),
    normals (m, 3), triangles (t, 3) int32)``, metres, counter-clockwise seen from outside.

    A ``"mesh"`` prop is ``surface``, its file's triangles (``fabrik3d.io.prop_file.prop_surface`` finds
    them), centred on their bounding box and stretched to ``size`` (not along an axis where the mesh is
    flat), with its normals (turned with the stretch) or ``vertex_normals``; without ``surface``, its
    bounding box. ``surface`` is ignored for the built-in shapes."""
    w, h, d = (float(x) for x in prop.size)
    if prop.shape == "mesh" and surface is not None:
        return _fitted(surface, np.array([w, h, d]))
    if prop.shape in ("box", "block", "plane", "wall", "mesh"):
        return _box(w, h, d)
    if prop.shape == "sphere":
        return _round(w, h, d, segments, 0.0)
    if prop.shape == "cylinder":
        return _cylinder(w, h, d, segments)
    return _round(w, h, d, segments, max(h - w, 0.0))  # (a capsule)


def vertex_normals(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Unit normals ``(v, 3)`` of a mesh's vertices ``points`` ``(v, 3)``: the area-weighted normals of
    their ``triangles`` ``(t, 3)`` (counter-clockwise seen from outside), for meshes that come without
    normals; a vertex of no triangle (or of flat ones only) gets a zero vector."""
    p = np.asarray(points, dtype=np.float64)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    faces = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    out = np.zeros_like(p)
    for k in range(3):
        np.add.at(out, t[:, k], faces)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def nearest_on_surface(point: Any, vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The point ``(3,)`` of a triangle mesh (``vertices`` ``(v, 3)``, ``triangles`` ``(t, 3)``, as
    ``prop_mesh`` gives them) nearest ``point`` ``(3,)``, in the same frame and units (metres): on a
    triangle's face where the point lies over it, else on its nearest edge or corner. Where a hand is
    put on a prop (a contact), its point on the prop's own surface, not its box's."""
    p = checks.point(point, "point")
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not len(t):
        raise ValueError("triangles: none; a surface needs at least one")
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    candidates = []
    for u, w in ((a, b), (b, c), (c, a)):  # (each edge: the point of the segment nearest p)
        e = w - u
        s = np.clip(np.einsum("ij,ij->i", p - u, e) / np.maximum(np.einsum("ij,ij->i", e, e), 1e-300), 0.0, 1.0)
        candidates.append(u + s[:, None] * e)
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    face = p - (np.einsum("ij,ij->i", p - a, n) / np.maximum(nn, 1e-300))[:, None] * n
    # (over the face: on the inner side of all three edges; a degenerate triangle has its edges only)
    inside = nn > 1e-24
    for u, w in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(w - u, face - u), n) >= 0.0
    candidates.append(np.where(inside[:, None], face, np.inf))
    points = np.stack(candidates)  # (4, t, 3)
    gaps = np.linalg.norm(points - p, axis=2)
    k, i = np.unravel_index(int(np.argmin(gaps)), gaps.shape)
    return points[k, i].copy()


def _fitted(surface: Surface, size: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``surface`` centred on its bounding box and stretched to ``size`` ``(3,)`` (``prop_mesh``)."""
    v = np.asarray(surface.vertices, dtype=float).reshape(-1, 3)
    triangles = np.asarray(surface.triangles, dtype=np.int32).reshape(-1, 3)
    lower, upper = v.min(axis=0), v.max(axis=0)
    extent = upper - lower
    stretch = np.where(extent >= FLAT, size / np.maximum(extent, FLAT), 1.0)
    vertices = (v - (lower + upper) / 2) * stretch
    if surface.normals is None:
        normals = vertex_normals(vertices, triangles)
    else:  # (a normal turns with the inverse of a stretch)
        n = np.asarray(surface.normals, dtype=float).reshape(-1, 3) / stretch
        normals = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    normals[np.linalg.norm(normals, axis=1) < 0.5] = (0.0, 1.0, 0.0)  # (none to give: any unit vector)
    return vertices, normals, triangles


def _box(w: float, h: float, d: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    verts, norms, tris = [], [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.roll(np.eye(3), 1, axis=0)[axis], np.roll(np.eye(3), 2, axis=0)[axis]
            if sign > 0:
                u, v = v, u
            base = len(verts)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                verts.append((n + a * u + b * v) * 0.5)
                norms.append(n)
            tris += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    return (np.array(verts) * (w, h, d), np.array(norms), np.array(tris, np.int32))


def _cylinder(w: float, h: float, d: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.linspace(0, 2 * math.pi, k, endpoint=False)
    ring = np.stack([np.cos(a), np.zeros(k), -np.sin(a)], axis=1)
    verts = [ring * 0.5 + (0, -0.5, 0), ring * 0.5 + (0, 0.5, 0)]
    norms = [ring, ring]
    tris = [(i, (i + 1) % k, k + (i + 1) % k) for i in range(k)] + [(i, k + (i + 1) % k, k + i) for i in range(k)]
    for y, base in ((-0.5, 2 * k), (0.5, 3 * k + 1)):  # the caps: a fan round a centre
        verts += [ring * 0.5 + (0, y, 0), np.array([[0.0, y, 0.0]])]
        norms += [np.tile((0.0, 2 * y, 0.0), (k + 1, 1))]
        c = base + k
        tris += [(c, base + (i + 1) % k, base + i) if y < 0 else (c, base + i, base + (i + 1) % k) for i in range(k)]
    return np.concatenate(verts) * (w, h, d), np.concatenate(norms), np.array(tris, np.int32)


def _round(w: float, h: float, d: float, k: int, stretch: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A sphere of diameters ``(w, h, d)``, or a capsule: a sphere of diameter ``w`` split at its equator and
    its halves ``stretch`` apart (the cylinder between them)."""
    rows = k // 2 + 1
    lat = np.linspace(-math.pi / 2, math.pi / 2, rows)
    lon = np.linspace(0, 2 * math.pi, k + 1)
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    unit = np.stack([np.cos(la) * np.cos(lo), np.sin(la), -np.cos(la) * np.sin(lo)], axis=-1).reshape(-1, 3)
    if stretch > 0:  # a capsule: radius w/2 everywhere, the two halves moved apart
        verts = unit * (w / 2) + np.where(unit[:, 1:2] >= 0, 1.0, -1.0) * (0, stretch / 2, 0)
        normals = unit
    else:
        scale = np.array([w, h, d]) / 2
        verts = unit * scale
        normals = unit / scale
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    tris = []
    for r in range(rows - 1):
        for c in range(k):
            a, b = r * (k + 1) + c, r * (k + 1) + c + 1
            tris += [(a, b, b + k + 1), (a, b + k + 1, a + k + 1)]
    return verts, normals, np.array(tris, np.int32)
