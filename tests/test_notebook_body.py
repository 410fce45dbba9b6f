"""The body in the notebook view (issue 31, items 1, 3 and 4 in the notebook): the humanoid shows the
mannequin skinned into every pose, the centre of mass and its shadow (green over the feet, red when the
pose falls over), and solves with the scene's floor and balance, switched by ``set_floor`` and
``set_balance``; a character shows its own mesh and no mannequin; a robot arm none by default."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_notebook

import fabrik3d
from fabrik3d.io.scene import Scene
from fabrik3d.model import mass
from fabrik3d.model.mannequin import Mannequin

notebook = require_notebook()
SkeletonView, BALANCED, FALLING = notebook.SkeletonView, notebook.body.BALANCED, notebook.body.FALLING

BODY = fabrik3d.presets.get("humanoid")
TOES = {t: BODY.rest_positions[BODY.index(t)] for t in ("toe_l", "toe_r")}


def test_the_humanoid_shows_the_mannequin_in_every_pose() -> None:
    view = SkeletonView(BODY)
    assert view.mannequin_mesh is not None and view.mannequin_mesh.visible
    rest = view.mannequin_mesh.geometry.attributes["position"].array.copy()
    view.set_target("hand_l", [0.35, 1.3, 0.35])
    shown = view.mannequin_mesh.geometry.attributes["position"].array
    expected, _ = Mannequin.of(BODY).skinned(view.result.positions, view.result.rotations)
    np.testing.assert_allclose(shown, expected, atol=1e-6)
    assert np.abs(shown - rest).max() > 0.2  # (the arm moved)
    view.show_mannequin(False)
    assert not view.mannequin_mesh.visible


def test_the_centre_of_mass_turns_red_when_the_body_falls_and_balance_brings_it_back() -> None:
    scene = Scene(BODY, targets=TOES, root_target=BODY.rest_positions[BODY.root] + [0.0, 0.0, 0.3])
    view = SkeletonView(scene)
    com = mass.center_of_mass(BODY, view.result.positions)
    np.testing.assert_allclose(view.com_marker.position, com, atol=1e-9)
    assert not view.balanced and view.com_marker.material.color == FALLING
    view.set_balance(True)
    assert view.scene.balance and view.balanced and view.com_marker.material.color == BALANCED
    assert view.com_shadow.position[1] == pytest.approx(mass.rest_ground(BODY), abs=0.01)


def test_the_floor_keeps_every_joint_above_it() -> None:
    low = BODY.rest_positions[BODY.root] - [0.0, 0.5, 0.0]  # (the pelvis pulled down half a metre)
    view = SkeletonView(Scene(BODY, root_target=low))
    assert view.scene.floor is None and view.result.positions[:, 1].min() < -0.1  # (the legs through the ground)
    view.set_floor(0.0)
    assert view.scene.floor == 0.0 and view.result.positions[:, 1].min() >= -1e-6


def test_other_skeletons_show_no_mannequin_by_default() -> None:
    arm = SkeletonView(fabrik3d.presets.get("robot_arm"))
    assert not arm.mannequin_mesh.visible and not arm.com_marker.visible and arm.balanced
    shown = SkeletonView(fabrik3d.presets.get("robot_arm"), show_mannequin=True)
    assert shown.mannequin_mesh.visible
    none = SkeletonView(BODY, show_mannequin=False)
    assert none.mannequin_mesh is None
    with pytest.raises(ValueError, match="without a mannequin"):
        none.show_mannequin()
