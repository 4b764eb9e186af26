"""Writes the NPY, NPZ, IDX and CSV fixtures of the data package's tests.

Run from this folder with NumPy installed: python3 make_fixtures.py
Every array is a formula of its index that the tests recompute:
value(i) = (i - 3) * 0.5 for floats, (i - 3) * 7 for signed integers and
i * 11 % 256 for uint8, in C order.
"""
import gzip
import struct

import numpy as np


def value(n, dtype):
    i = np.arange(n)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return ((i - 3) * 0.5).astype(dtype)
    if dt.kind == "i":
        return ((i - 3) * 7).astype(dtype)
    return (i * 11 % 256).astype(dtype)


def array(shape, dtype):
    return value(int(np.prod(shape)), dtype).reshape(shape)


def save(name, arr, version=None):
    with open(name, "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


save("f32.npy", array((3, 4), "<f4"))
save("f64.npy", array((2, 3), "<f8"))
save("i32.npy", array((5,), "<i4"))
save("i64.npy", array((4, 1), "<i8"))
save("u8.npy", array((2, 2, 3), "u1"))
save("f64_v2.npy", array((2, 3), "<f8"), version=(2, 0))
save("f64_v3.npy", array((2, 3), "<f8"), version=(3, 0))
save("empty.npy", array((0, 3), "<f4"))
save("scalar.npy", np.array(2.5))
# Not supported: Fortran order, big-endian data, other dtypes.
save("fortran.npy", np.asfortranarray(array((2, 3), "<f8")))
save("big_endian.npy", array((2, 3), ">f8"))
save("f16.npy", array((2, 3), "<f2"))
save("bool.npy", np.array([True, False]))

x, y = array((5, 2, 2), "<f4"), array((5,), "<i8")
np.savez("xy.npz", x=x, y=y)
np.savez_compressed("xy_compressed.npz", x=x, y=y)


def idx(name, arr, code):
    with gzip.open(name, "wb") if name.endswith(".gz") else open(name, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, code, arr.ndim))
        f.write(struct.pack(">" + "I" * arr.ndim, *arr.shape))
        f.write(arr.astype(arr.dtype.newbyteorder(">")).tobytes())


idx("images-idx3-ubyte", array((3, 2, 2), "u1"), 0x08)
idx("labels-idx1-ubyte.gz", np.array([4, 0, 2], dtype="u1"), 0x08)
idx("f32-idx2.gz", array((2, 3), "f4"), 0x0D)
idx("f64-idx1", array((4,), "f8"), 0x0E)
idx("i32-idx2", array((3, 2), "i4"), 0x0C)

# CSV: a header, two features around a label column, then a gzip copy.
rows = ["a,label,b"] + ["%g,%d,%g" % (v, k % 3, 2 * v) for k, v in enumerate(value(6, "f8"))]
with open("labelled.csv", "w") as f:
    f.write("\n".join(rows) + "\n")
with gzip.open("labelled.csv.gz", "wt") as f:
    f.write("\n".join(rows[1:]) + "\n")
