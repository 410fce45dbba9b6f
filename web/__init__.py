"""fabrik3d's trame web application (installed as the package ``fabrik3d_web``), in layers, each importing
only those before it: ``document`` (the document and the user's actions; numpy and fabrik3d), ``view`` (the
VTK scene and its images), ``drags`` (what the mouse does in the view), ``panels`` (the page); ``app``
composes them, ``serve`` starts it (docs/architecture.md)."""
