"""The model: skeletons, joint constraints (declarations and JSON), rest frames, presets, targets."""
