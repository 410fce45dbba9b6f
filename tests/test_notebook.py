"""The Jupyter view: real pythreejs widgets, the real solver, and the quickstart run in a real kernel."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import IN_CI, ROOT
from helpers.limits import qmat

import fabrik3d
from fabrik3d.io.scene import Scene
from fabrik3d.model import constraints, presets

try:
    from fabrik3d.notebook import SkeletonView
except ImportError as exc:  # the notebook extra is optional for users, required in CI
    if IN_CI:
        raise
    pytest.skip(str(exc), allow_module_level=True)

NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
F32 = 1e-6  # positions travel as float32: relative error ~6e-8 of values around 1 m


def named(view: SkeletonView, name: str):
    """The three.js object called ``name`` anywhere in the view's scene."""
    stack = list(view.renderer.scene.children)
    while stack:
        obj = stack.pop()
        if obj.name == name:
            return obj
        stack.extend(obj.children)
    raise AssertionError(f"no object {name!r} in the scene")


def positions_of(view: SkeletonView, name: str) -> np.ndarray:
    return np.asarray(named(view, name).geometry.attributes["position"].array, dtype=float)


def assert_geometry_shows(view: SkeletonView, pose: np.ndarray) -> None:
    skeleton = view.skeleton
    np.testing.assert_allclose(positions_of(view, "fabrik3d.joints"), pose, atol=F32)
    pairs = [(int(p), j) for j, p in enumerate(skeleton.parents) if p >= 0]
    bones = positions_of(view, "fabrik3d.bones").reshape(-1, 2, 3)
    np.testing.assert_allclose(bones[:, 0], pose[[p for p, _ in pairs]], atol=F32)
    np.testing.assert_allclose(bones[:, 1], pose[[c for _, c in pairs]], atol=F32)
    # the pickable tubes: a ring around each end of each bone, centred on the joint
    rings = positions_of(view, "fabrik3d.body")[: len(pairs) * 12].reshape(len(pairs), 2, 6, 3)
    np.testing.assert_allclose(rings[:, 0].mean(axis=1), pose[[p for p, _ in pairs]], atol=F32)
    np.testing.assert_allclose(rings[:, 1].mean(axis=1), pose[[c for _, c in pairs]], atol=F32)
    for name in skeleton.end_effectors:
        marker = named(view, f"fabrik3d.target.{name}")
        assert marker.visible == (name in view.targets)
        if name in view.targets:
            np.testing.assert_allclose(marker.position, view.targets[name], atol=1e-12)


def test_view_shows_the_solved_pose_and_updates_it_in_place():
    humanoid = presets.get("humanoid")
    view = SkeletonView(humanoid)
    stance = fabrik3d.solve(humanoid, {}).positions  # (the rest pose, its free arms hanging)
    np.testing.assert_allclose(view.pose, stance, atol=1e-12)
    assert_geometry_shows(view, stance)
    scene_children = list(view.renderer.scene.children)
    attribute = named(view, "fabrik3d.joints").geometry.attributes["position"]

    start = view.pose
    view.set_target("hand_l", [0.2, 1.2, 0.45])
    first = fabrik3d.solve(humanoid, {"hand_l": [0.2, 1.2, 0.45]}, positions=start)
    np.testing.assert_allclose(view.pose, first.positions, atol=1e-12)  # (fingers: frames fitted or given)
    assert view.result.errors.keys() == {"hand_l"}
    assert_geometry_shows(view, first.positions)

    view.set_target("hand_r", [-0.25, 1.3, 0.4])  # warm-started from the previous pose
    second = fabrik3d.solve(
        humanoid, {"hand_l": [0.2, 1.2, 0.45], "hand_r": [-0.25, 1.3, 0.4]}, positions=first.positions
    )
    np.testing.assert_allclose(view.pose, second.positions, atol=1e-12)  # (fingers: frames fitted or given)
    np.testing.assert_allclose(view.result.rotations, second.rotations, atol=1e-12)  # (fingers: frames fitted or given)
    assert_geometry_shows(view, second.positions)
    assert sorted(view.targets) == ["hand_l", "hand_r"]
    # same scene graph, same attribute widget: only the arrays and positions changed
    assert list(view.renderer.scene.children) == scene_children
    assert named(view, "fabrik3d.joints").geometry.attributes["position"] is attribute
    assert "iterations" in view._status.value


def test_view_of_a_scene_uses_its_targets_and_settings():
    humanoid = presets.get("humanoid")
    scene = Scene(humanoid, {"toe_r": [-0.2, 0.05, 0.25]}, tolerance=1e-4, max_iterations=50)
    view = SkeletonView(scene, {"head": [0.05, 1.7, 0.1]})
    expected = fabrik3d.solve(
        humanoid,
        {"toe_r": [-0.2, 0.05, 0.25], "head": [0.05, 1.7, 0.1]},
        tolerance=1e-4,
        max_iterations=50,
    )
    np.testing.assert_allclose(view.pose, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    assert view.scene.tolerance == 1e-4 and sorted(view.scene.targets) == ["head", "toe_r"]
    assert_geometry_shows(view, expected.positions)
    with pytest.raises(ValueError, match="Skeleton or a Scene"):
        SkeletonView("humanoid")
    with pytest.raises(ValueError, match=r"targets\.hand_l"):
        SkeletonView(humanoid, {"hand_l": [0.0, np.inf, 0.0]})


@pytest.mark.parametrize(
    ("name", "point", "match"),
    [
        ("hand_l", [np.nan, 1.0, 0.0], "finite"),
        ("hand_l", [0.0, np.inf, 0.0], "finite"),
        ("hand_l", [0.0, 1.0], r"shape \(3,\)"),
        ("hand_l", [[0.0, 1.0, 2.0]], r"shape \(3,\)"),
        ("hand_l", "up", "three numbers"),
        ("hand_l", [1e12, 0.0, 0.0], "at most"),
        ("elbow_l", [0.0, 1.0, 0.0], "not an end effector.*hand_l"),
        ("hadn_l", [0.0, 1.0, 0.0], "not an end effector"),
        (["hand_l"], [0.0, 1.0, 0.0], "not an end effector"),
    ],
)
def test_bad_input_from_python_raises_and_keeps_the_pose(name, point, match):
    view = SkeletonView(presets.get("humanoid"), {"hand_l": [0.4, 1.5, 0.3]})
    pose, targets = view.pose, view.targets
    with pytest.raises(ValueError, match=match):
        view.set_target(name, point)
    np.testing.assert_allclose(view.pose, pose, atol=1e-12)  # (fingers: frames fitted or given)
    assert view.targets.keys() == targets.keys()
    np.testing.assert_array_equal(view.targets["hand_l"], targets["hand_l"])
    assert np.all(np.isfinite(positions_of(view, "fabrik3d.joints")))
    assert_geometry_shows(view, pose)


def test_bad_input_from_the_controls_shows_a_message_and_keeps_the_pose():
    view = SkeletonView(presets.get("humanoid"), {"hand_l": [0.4, 1.5, 0.3]})
    pose = view.pose
    x_box, y_box, _ = view.boxes["hand_l"]
    y_box.value = float("nan")  # what a user typed
    assert "finite" in view.message and "targets.hand_l" in view.message
    assert "finite" in view._message_html.value
    np.testing.assert_allclose(view.pose, pose, atol=1e-12)  # (fingers: frames fitted or given)
    assert y_box.value == 1.5  # the box shows the target again
    x_box.value = 5e12
    assert "at most" in view.message
    np.testing.assert_allclose(view.pose, pose, atol=1e-12)  # (fingers: frames fitted or given)
    assert_geometry_shows(view, pose)

    x_box.value = 0.45  # a good edit moves the target, re-solves and clears the message
    np.testing.assert_array_equal(view.targets["hand_l"], [0.45, 1.5, 0.3])
    expected = fabrik3d.solve(view.skeleton, {"hand_l": [0.45, 1.5, 0.3]}, positions=pose)
    np.testing.assert_allclose(view.pose, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    assert view.message == "" and view._message_html.value == ""
    assert_geometry_shows(view, expected.positions)


def test_checkboxes_turn_targets_on_and_off():
    humanoid = presets.get("humanoid")
    view = SkeletonView(humanoid)
    assert all(box.disabled for box in view.boxes["toe_l"])
    view.checkboxes["toe_l"].value = True  # pins the toe where it stands
    np.testing.assert_allclose(view.targets["toe_l"], humanoid.rest_positions[humanoid.index("toe_l")])
    assert not any(box.disabled for box in view.boxes["toe_l"])
    pinned = view.pose
    view.boxes["toe_l"][2].value = 0.2  # the toe steps forward
    np.testing.assert_allclose(view.targets["toe_l"], [0.09, 0.02, 0.2])
    expected = fabrik3d.solve(humanoid, view.targets, positions=pinned)
    np.testing.assert_allclose(view.pose, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    assert_geometry_shows(view, view.pose)
    pose = view.pose
    view.checkboxes["toe_l"].value = False
    assert "toe_l" not in view.targets
    np.testing.assert_allclose(view.pose, pose, atol=1e-12)  # a free effector stays where it was
    assert not named(view, "fabrik3d.target.toe_l").visible
    np.testing.assert_allclose([b.value for b in view.boxes["toe_l"]], pose[humanoid.index("toe_l")])


def test_double_click_on_the_ground_or_body_places_the_chosen_target():
    humanoid = presets.get("humanoid")
    view = SkeletonView(humanoid, {"hand_l": [0.4, 1.5, 0.3]})
    view.place_on_pick.value = "hand_r"
    ground = named(view, "fabrik3d.ground")
    assert ground in named(view, "fabrik3d.pickable").children and view.picker.event == "dblclick"
    pose = view.pose
    # the message the browser's Picker sends on a double-click that hit the ground
    view.picker.set_state({"point": [-0.35, 0.0, 0.4], "object": f"IPY_MODEL_{ground.model_id}", "distance": 3.1})
    np.testing.assert_array_equal(view.targets["hand_r"], [-0.35, 0.0, 0.4])
    expected = fabrik3d.solve(humanoid, view.targets, positions=pose)
    np.testing.assert_allclose(view.pose, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    assert_geometry_shows(view, expected.positions)
    # a double-click that hit nothing changes nothing
    view.picker.set_state({"point": [0.0, 0.0, 0.0], "object": None, "distance": None})
    np.testing.assert_array_equal(view.targets["hand_r"], [-0.35, 0.0, 0.4])
    np.testing.assert_allclose(view.pose, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)


def test_the_body_stays_pickable_when_stretched_out():
    # three.js computes a geometry's bounding sphere once and skips picking rays that miss it:
    # the body's two unused corner vertices must box in every pose, even a fully stretched one
    zigzag = [[0.1 * (k % 2), 0.1 * k, 0.0] for k in range(7)]  # a curled chain, 0.85 long
    chain = fabrik3d.Skeleton([f"j{k}" for k in range(7)], [-1, 0, 1, 2, 3, 4, 5], zigzag)
    view = SkeletonView(chain, {"j6": [30.0, -4.0, 20.0]})  # far out of reach: the chain straightens
    assert np.linalg.norm(view.pose[6]) == pytest.approx(chain.bone_lengths.sum(), rel=1e-9)
    body = positions_of(view, "fabrik3d.body")
    low, high = body[-2], body[-1]
    assert np.all(body >= low - 1e-6) and np.all(body <= high + 1e-6)


def test_export_gltf_writes_the_pose(tmp_path):
    view = SkeletonView(presets.get("humanoid"), {"hand_l": [0.4, 1.5, 0.3]})
    out = tmp_path / "pose.glb"
    view.export_gltf(out)
    data = out.read_bytes()
    assert data[:4] == b"glTF" and int.from_bytes(data[8:12], "little") == len(data)
    with pytest.raises(ValueError):
        view.export_gltf(tmp_path / "missing-folder" / "pose.glb")
    assert not (tmp_path / "missing-folder").exists()


def _limit_outline(limit, target):
    """Carried frame, unit outline directions and solved bone direction of a vertical four-joint chain with
    ``limit`` on its second joint, viewed with a target on its tip."""
    chain = fabrik3d.Skeleton(
        ["base", "knee", "ankle", "tip"], [-1, 0, 1, 2], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], {"knee": limit}
    )
    view = SkeletonView(chain, {"tip": target})
    pose, frames = view.pose, view.result.rotations
    # the limit's rest-pose axes move with the parent's (base's) frame
    carry = qmat(frames[0]) @ qmat(chain.rest_frames[0]).T
    rim = positions_of(view, "fabrik3d.limits")
    rim = rim[np.linalg.norm(rim - pose[1], axis=1) > 1e-6] - pose[1]  # drop the spokes' centre
    assert np.allclose(carry, np.eye(3)) == np.allclose(target, [0.0, 3.0, 0.0])  # a moved base turns the limit
    bone = (pose[2] - pose[1]) / np.linalg.norm(pose[2] - pose[1])
    return carry, rim / np.linalg.norm(rim, axis=1, keepdims=True), bone


@pytest.mark.parametrize("target", [[0.0, 3.0, 0.0], [1.2, 1.9, 0.7]])
def test_joint_limits_are_drawn_where_the_parent_frame_carries_them(target):
    if not hasattr(constraints, "Cone"):
        pytest.skip("fabrik3d.constraints has no joint limits in this checkout")
    carry, rim, _ = _limit_outline(constraints.Cone(35.0), target)
    bone = carry @ [0.0, 1.0, 0.0]
    np.testing.assert_allclose(np.degrees(np.arccos(np.clip(rim @ bone, -1, 1))), 35.0, atol=1e-4)

    carry, rim, _ = _limit_outline(constraints.Hinge((1.0, 0.0, 0.0), -60.0, 20.0), target)
    axis, bone = carry @ [1.0, 0.0, 0.0], carry @ [0.0, 1.0, 0.0]
    np.testing.assert_allclose(rim @ axis, 0.0, atol=1e-6)  # in the hinge's plane
    angles = np.degrees(np.arctan2(rim @ np.cross(axis, bone), rim @ bone))  # right-handed about the axis
    assert angles.min() == pytest.approx(-60.0, abs=1e-4) and angles.max() == pytest.approx(20.0, abs=1e-4)

    ellipse = constraints.EllipticalCone(left_deg=20.0, right_deg=40.0, up_deg=30.0, down_deg=10.0)
    carry, rim, _ = _limit_outline(ellipse, target)
    right, bone = carry @ [1.0, 0.0, 0.0], carry @ [0.0, 1.0, 0.0]
    up = np.cross(right, bone)
    theta = np.degrees(np.arccos(np.clip(rim @ bone, -1, 1)))
    x, z = rim @ right, rim @ up
    u, v = theta * x / np.hypot(x, z), theta * z / np.hypot(x, z)
    a, b = np.where(u >= 0, 40.0, 20.0), np.where(v >= 0, 30.0, 10.0)
    np.testing.assert_allclose((u / a) ** 2 + (v / b) ** 2, 1.0, atol=1e-4)
    assert u.max() == pytest.approx(40.0, abs=1e-3) and v.min() == pytest.approx(-10.0, abs=1e-3)


def test_a_bone_held_by_its_limit_lies_on_the_drawn_outline():
    if not hasattr(constraints, "Cone"):
        pytest.skip("fabrik3d.constraints has no joint limits in this checkout")
    # the target pulls the knee's bone toward its cone: it ends within the drawn rim
    _, rim, bone = _limit_outline(constraints.Cone(35.0), [2.0, 0.5, 0.5])
    rim = np.unique(rim.round(7), axis=0)
    axis = rim.mean(axis=0) / np.linalg.norm(rim.mean(axis=0))  # the drawn cone's axis
    np.testing.assert_allclose(np.degrees(np.arccos(np.clip(rim @ axis, -1, 1))), 35.0, atol=1e-3)
    assert np.degrees(np.arccos(np.clip(bone @ axis, -1, 1))) <= 35.0 + 1e-3
    # ... and a hinged bone lies in the drawn arc's plane, within its span
    carry, arc, bone = _limit_outline(constraints.Hinge((1.0, 0.0, 0.0), -60.0, 20.0), [0.3, 1.0, 2.0])
    axis, rest = carry @ [1.0, 0.0, 0.0], carry @ [0.0, 1.0, 0.0]
    assert abs(bone @ axis) < 1e-9
    span = np.degrees(np.arctan2(arc @ np.cross(axis, rest), arc @ rest))
    angle = np.degrees(np.arctan2(bone @ np.cross(axis, rest), bone @ rest))
    assert span.min() - 1e-6 <= angle <= span.max() + 1e-6


def test_importing_without_pythreejs_names_the_extra():
    code = "import sys\nsys.modules['pythreejs'] = None\nimport fabrik3d.notebook\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert "pip install 'fabrik3d[notebook]'" in proc.stderr


# -- the quickstart notebook in a real kernel ------------------------------------------------------
SCRIPTED = """\
import json
before = {"pose": view.pose.tolist(), "targets": {k: v.tolist() for k, v in view.targets.items()}}
view.set_target("hand_l", [0.45, 1.4, 0.35])
print(json.dumps({"executable": sys.executable, "before": before, "after": view.pose.tolist()}))
"""


def _kernel_manager(tmp_path: Path):
    """A kernel manager whose ``python3`` kernel is this interpreter (the venv's), from a temporary kernelspec."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec_dir = tmp_path / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (fabrik3d test)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


def _widget_array(state: dict, model_id: str) -> np.ndarray:
    widget = state[model_id]
    (buffer,) = [b for b in widget["buffers"] if b["path"] == ["array", "buffer"]]
    array = widget["state"]["array"]
    data = np.frombuffer(base64.b64decode(buffer["data"]), dtype=array["dtype"])
    return data.reshape(array["shape"]).astype(float)


def _ref(value: str) -> str:
    assert value.startswith("IPY_MODEL_")
    return value[len("IPY_MODEL_") :]


def test_quickstart_runs_in_a_kernel_and_the_widget_state_shows_the_solved_pose(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys\n" + SCRIPTED))
    client = nbclient.NotebookClient(
        nb,
        km=_kernel_manager(tmp_path),
        timeout=120,
        startup_timeout=60,
        resources={"metadata": {"path": str(tmp_path)}},
        store_widget_state=True,
    )
    client.execute()

    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert (tmp_path / "humanoid_pose.glb").read_bytes()[:4] == b"glTF"
    # (the report is the cell's stdout; under load a kernel may add other streams, stderr notices)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    report, _ = json.JSONDecoder().raw_decode(printed[printed.index("{") :])
    assert report["executable"] == sys.executable
    humanoid = presets.get("humanoid")
    after = np.array(report["after"])
    # the kernel's pose is the warm-started solve of the scripted change, reproduced here
    targets = {**report["before"]["targets"], "hand_l": [0.45, 1.4, 0.35]}
    expected = fabrik3d.solve(humanoid, targets, positions=np.array(report["before"]["pose"]))
    np.testing.assert_allclose(after, expected.positions, atol=1e-12)  # (fingers: frames fitted or given)
    hand = humanoid.index("hand_l")
    before = np.array(report["before"]["pose"])
    goal = np.array(targets["hand_l"])
    assert np.linalg.norm(after[hand] - goal) < np.linalg.norm(before[hand] - goal) - 0.1  # the hand moved there

    # the widget state the kernel sent to the front end, as saved in the notebook
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    objects = {w["state"].get("name"): w["state"] for w in state.values() if w["state"].get("name")}
    joints = state[_ref(objects["fabrik3d.joints"]["geometry"])]["state"]
    np.testing.assert_allclose(_widget_array(state, _ref(joints["attributes"]["position"])), after, atol=F32)
    bones = state[_ref(objects["fabrik3d.bones"]["geometry"])]["state"]
    segments = _widget_array(state, _ref(bones["attributes"]["position"])).reshape(-1, 2, 3)
    children = [j for j in range(len(humanoid)) if humanoid.parents[j] >= 0]
    np.testing.assert_allclose(segments[:, 1], after[children], atol=F32)
    np.testing.assert_allclose(segments[:, 0], after[humanoid.parents[children]], atol=F32)
    for name, point in targets.items():
        marker = objects[f"fabrik3d.target.{name}"]
        assert marker["visible"] is True
        np.testing.assert_allclose(marker["position"], point, atol=1e-12)


def test_pin_and_free_from_python():
    humanoid = presets.get("humanoid")
    view = SkeletonView(humanoid)
    view.set_target("hand_l", [0.3, 1.25, 0.3])
    hand_r = view.pose[humanoid.index("hand_r")].copy()
    view.pin("hand_r")  # the other hand stays where it is from now on
    np.testing.assert_allclose(view.targets["hand_r"], hand_r, atol=1e-12)
    assert view.checkboxes["hand_r"].value
    view.set_target("hand_l", [0.35, 1.3, 0.35])
    assert np.linalg.norm(view.pose[humanoid.index("hand_r")] - hand_r) <= view.scene.tolerance
    view.free("hand_r")
    assert "hand_r" not in view.targets and not view.checkboxes["hand_r"].value
    with pytest.raises(ValueError, match="not an end effector"):
        view.pin("elbow_l")
    assert set(view.targets) == {"hand_l"}


def test_the_timeline_slider_shows_the_pose_baked_at_each_frame() -> None:
    from fabrik3d.animation import Animation, Key, bake
    from fabrik3d.notebook import timeline

    body = presets.get("humanoid")
    hand = body.rest_positions[body.index("hand_l")]
    anim = Animation((Key(0, {"hand_l": hand}), Key(20, {"hand_l": [0.25, 1.25, 0.35]})))
    view = SkeletonView(Scene(body, animation=anim))
    slider = timeline(view)
    assert (slider.min, slider.max, slider.value) == (0, 20, 0)
    take = bake(body, anim)
    slider.value = 12
    np.testing.assert_allclose(view.pose, take.positions[12], atol=1e-12)  # (fingers: frames fitted or given)
    np.testing.assert_allclose(view.targets["hand_l"], anim.goals_at(12).targets["hand_l"].position)
    assert_geometry_shows(view, take.positions[12])
    with pytest.raises(ValueError, match="timeline: expected an Animation with keys"):
        timeline(SkeletonView(body))


def test_a_character_view_skins_its_meshes_into_every_pose(tmp_path: Path) -> None:
    from helpers.character_asset import write_character

    from fabrik3d.io.character import load_character
    from fabrik3d.notebook.character import CharacterView

    character = load_character(write_character(tmp_path, "hero", "blender", armature=True))
    view = CharacterView(character)
    assert len(view.meshes) == len(character.meshes)
    assert any(m.material.map is not None for m in view.meshes)  # the base-colour texture came along
    hand = character.effectors["hand_l"]
    view.set_target(hand, [0.3, 1.4, 0.4])
    for mesh, (expected, _) in zip(view.meshes, character.skin(view.result, normals=True)):
        got = np.asarray(mesh.geometry.attributes["position"].array, dtype=float)
        np.testing.assert_allclose(got, expected, atol=F32)
    # the vertices weighted to the hand moved with it
    rest = character.meshes[0].positions
    moved = np.linalg.norm(np.asarray(view.meshes[0].geometry.attributes["position"].array) - rest, axis=1)
    assert moved.max() > 0.1
    with pytest.raises(ValueError, match="CharacterView: expected a Character"):
        CharacterView(presets.get("humanoid"))
