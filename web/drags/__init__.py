"""The drags: what the mouse does in the view (grabbing and dragging a handle, turning a joint, a ring or
a target, a prop's handles) and where things are on the page, each a component of ``fabrik3d_web.app.WebApp``
given what it reads and calls, with its page triggers. They may import the view and document layers and the
shared ``security`` and ``pages`` modules, never the panels or the app (tests/test_architecture.py)."""
