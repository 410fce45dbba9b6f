"""The notebook's view of a stage (issue 52): every figure and prop, where the library puts them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pythreejs")

from fabrik3d.display import TUBE_SIDES
from fabrik3d.io.scene import scene_or_preset
from fabrik3d.io.stage_pose import solve_stage
from fabrik3d.notebook.stage import StageView
from fabrik3d.stage import Contact, Figure, Hold, Placement, Prop, Stage, Transform, standing


def stage() -> Stage:
    return Stage(
        [Figure("Ada", scene_or_preset("humanoid")),
         Figure("Ben", scene_or_preset("humanoid"), Placement([-0.35, 0.0, 0.8], 180)),
         Figure("Cy", scene_or_preset("humanoid"), Placement([2.0, 0.0, 0.0], 90), hidden=True)],
        [standing("box", "box", 1.0, 0.5), Prop("stick", "cylinder", transform=Transform([0, 0.05, 0], scale=1.5),
                                                 parent=Hold("Ada", "hand_l"))],
        [Contact("Ada", "hand_r", "Ben", "hand_r")],
    )  # fmt: skip


def ring_centres(mesh) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The centres of the tubes' rings: per bone, its parent's and its child's joint."""
    verts = np.asarray(mesh.geometry.attributes["position"].array, float).reshape(-1, TUBE_SIDES, 3)
    return verts.mean(axis=1)


def test_every_figure_and_prop_is_drawn_where_the_stage_puts_it() -> None:
    s = stage()
    view = StageView(s)
    assert set(view.figure_meshes) == {"Ada", "Ben"}  # (Cy is hidden)
    assert set(view.prop_meshes) == {"box", "stick"}
    for i, name in ((0, "Ada"), (1, "Ben")):
        world = view.pose.world(i)[0]
        pairs = view._pairs[name]
        centres = ring_centres(view.figure_meshes[name])
        np.testing.assert_allclose(centres[0::2], world[pairs[:, 0]], atol=1e-5)
        np.testing.assert_allclose(centres[1::2], world[pairs[:, 1]], atol=1e-5)
    stick = view.prop_meshes["stick"]
    t = view.pose.prop_transform("stick")
    np.testing.assert_allclose(stick.position, t.position, atol=1e-9)
    np.testing.assert_allclose(stick.quaternion, t.rotation, atol=1e-9)
    assert stick.scale == (1.5, 1.5, 1.5)


def test_show_draws_another_pose_in_place() -> None:
    s = stage()
    view = StageView(s)
    mesh = view.figure_meshes["Ada"]
    import dataclasses

    ada = s.figures[0]
    root = ada.scene.skeleton.rest_positions[0] + [0.0, 0.0, -0.2]
    dragged = dataclasses.replace(ada, scene=dataclasses.replace(ada.scene, root_target=root))
    moved = dataclasses.replace(s, figures=[dragged, *s.figures[1:]])
    pose = solve_stage(moved, view.pose.poses, ["Ada"])
    view.show(pose)
    assert view.figure_meshes["Ada"] is mesh
    np.testing.assert_allclose(ring_centres(mesh)[0], pose.world(0)[0][0], atol=1e-5)
    with pytest.raises(ValueError, match="a StagePose of this stage"):
        view.show(pose.poses)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"expected a fabrik3d\.stage\.Stage"):
        StageView("stage.json")  # type: ignore[arg-type]
