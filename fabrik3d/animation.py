"""Animation: keys at frame numbers, the goals between them, and baking (docs/animation.md).

``Key`` and ``Animation`` (``fabrik3d.model.keys``) hold what a user poses with at frames;
``interpolate`` and ``slerp_curve`` (``fabrik3d.model.curves``) give the values between keys;
``bake`` (``fabrik3d.io.bake``) solves every frame of a range into a ``Take``, which
``fabrik3d.io.gltf.export_animation`` writes to glTF with every frame keyed.

Example::

    import fabrik3d
    from fabrik3d.animation import Animation, Key, bake

    body = fabrik3d.presets.get("humanoid")
    hand = body.rest_positions[body.index("hand_l")]
    anim = Animation((Key(0, {"hand_l": hand}), Key(30, {"hand_l": [0.25, 1.25, 0.35]})))
    take = bake(body, anim)  # 31 poses, 1/30 s apart
"""

from fabrik3d.io.bake import METHODS, bake, frame_range, solve_goals
from fabrik3d.model.curves import MODES, interpolate, slerp_curve
from fabrik3d.model.keys import DEFAULT_FPS, MAX_FRAME, Animation, Goals, Key

__all__ = [
    "DEFAULT_FPS",
    "MAX_FRAME",
    "METHODS",
    "MODES",
    "Animation",
    "Goals",
    "Key",
    "bake",
    "frame_range",
    "interpolate",
    "slerp_curve",
    "solve_goals",
]
