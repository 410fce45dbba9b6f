"""The document: the scene of figures, props and contacts, each figure's state (pose, targets, keys,
take, hands, body, character, pose library) and the user's actions on them, with undo. Plain Python
over numpy and ``fabrik3d``: it imports nothing of trame or VTK nor any other layer of
``fabrik3d_web``, so every action can be tested without a server or a window (tests/test_architecture.py
checks it)."""
