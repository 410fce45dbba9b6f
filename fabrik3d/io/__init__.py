"""Files: scenes, takes and glTF, each written atomically (``files``)."""
