"""Many straight lines drawn into one PNG (grey on transparent), with numpy and zlib only.

The whole-memory map draws its ~17,000 links as one picture under the points: as plotly traces
they cost most of the map's first draw (SVG or WebGL) and, in WebGL, every click's selection
redraw; as an image the browser only decodes it once and moves it with the axes.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

STAMP = 3  # a line's width in image pixels (the map shows the image ~4× smaller: a thin line)


def rasterize(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray, size: int) -> np.ndarray:
    """A size × size mask (uint8 0/255) with each segment (pixel coordinates, y down) drawn
    STAMP pixels wide: points sampled at least once per pixel along each segment."""
    mask = np.zeros((size, size), dtype=np.uint8)
    if not len(x0):
        return mask
    steps = np.ceil(np.maximum(np.abs(x1 - x0), np.abs(y1 - y0))).astype(np.int64) + 1
    seg = np.repeat(np.arange(len(x0)), steps)
    t = (np.arange(steps.sum()) - np.repeat(np.cumsum(steps) - steps, steps)) / np.maximum(steps[seg] - 1, 1)
    px = np.rint(x0[seg] + t * (x1[seg] - x0[seg])).astype(np.int64)
    py = np.rint(y0[seg] + t * (y1[seg] - y0[seg])).astype(np.int64)
    half = STAMP // 2
    for dx in range(-half, STAMP - half):
        for dy in range(-half, STAMP - half):
            mask[np.clip(py + dy, 0, size - 1), np.clip(px + dx, 0, size - 1)] = 255
    return mask


def png_data_uri(mask: np.ndarray, grey: int = 170) -> str:
    """The mask as a grey-and-alpha PNG (the mask is the alpha), as a data: URI plotly can show."""
    h, w = mask.shape
    pixels = np.empty((h, w, 2), dtype=np.uint8)
    pixels[..., 0], pixels[..., 1] = grey, mask
    rows = np.concatenate([np.zeros((h, 1), dtype=np.uint8), pixels.reshape(h, w * 2)], axis=1)  # filter 0

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 4, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
