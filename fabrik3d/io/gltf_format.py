"""glTF 2.0 container constants shared by the writer (``fabrik3d.io.gltf``) and the reader
(``fabrik3d.io.gltf_import``): accessor component types, the buffer view target, the GLB chunk
types, the data URI prefix of an embedded buffer (glTF 2.0 specification, sections 3.6 and 4.4), and
how both name things uniquely."""

from collections.abc import Iterable

FLOAT, UBYTE, USHORT, UINT = 5126, 5121, 5123, 5125
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
JSON_CHUNK, BIN_CHUNK = 0x4E4F534A, 0x004E4942
DATA_URI = "data:application/octet-stream;base64,"
# JOINTS_0 holds unsigned bytes or shorts: a skinned mesh indexes at most this many joints.
MAX_SKIN_JOINTS = 65536


def free_name(base: str, taken: set[str]) -> str:
    """``base`` or ``base_2``, ``base_3``, ... : the first not in ``taken`` (which it joins)."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def unique_names(bases: Iterable[str]) -> list[str]:
    """Each of ``bases`` made unique as ``free_name`` does it one by one (``base``, ``base_2``, ...), in
    time linear in their number: each base remembers the last suffix it took, so n bones of one name
    cost n steps, not n²/2."""
    taken: set[str] = set()
    last: dict[str, int] = {}
    out = []
    for base in bases:
        name, k = base, last.get(base, 1)
        if k > 1:
            name = f"{base}_{k}"
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        last[base] = k
        taken.add(name)
        out.append(name)
    return out
