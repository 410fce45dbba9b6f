"""The view: the VTK scene (the figure's sticks, handles, body, meshes, the other figures and the props,
rings and cues) and the images made of it (the image stream to the page, pictures, control images,
thumbnails, the page's script for the view's canvas). It may import VTK and the document layer
(``fabrik3d_web.document``), never trame nor the drags, panels or app (tests/test_architecture.py)."""
