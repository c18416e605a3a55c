"""The 2**16 extent limit of MPSGraph's padding (``padTensor`` and ``padGradientWithIncomingGradientTensor``), as a
condition of the wrong-result and unverified-regime tables (``pad_extent_ge``, :mod:`mpsready.ops.advisories`).

Public record (pytorch/pytorch, read 2026-12 in the issue tracker):

* PR #195147 (2026-08-28, "Fix pad corrupting rank > 4 tensors with >= 2^16 inner elements", fixes #194922): at
  rank > 4 both MPSGraph calls overwrite the copied input, with the boundary in elements
  ``max(output last dim, product of output dims after the padded axis) >= 65536``; ``pad_out_template`` pads the
  trailing ``len(padding) / 2`` dims at the operand's own rank, so constant, reflection and replication padding
  share it, forward and backward; padding at rank <= 4 was measured correct at any extent (macOS 26).
* #194922 (torch 2.13.0, macOS 26.6, M1 Pro and M4 Max): ``F.pad(x, (0, 0, 0, 0, 2, 0))`` of a (1, 1, 4, H, W)
  tensor is clean at H*W = 65472 and wrong at 65536 (64 x 1024 and 256 x 256 alike).

The padded axis is the outermost of the trailing ``len(padding) / 2`` dims (as ``pad_out_template`` builds the
graph), whether or not its own padding is zero."""

from __future__ import annotations

from math import prod
from typing import Any, Mapping, Sequence


def output_shape(shapes: Sequence[tuple[int, ...]], args: Mapping[str, Any]) -> tuple[tuple[int, ...], int] | None:
    """The padded output's shape and the number of padded trailing dims of a padding call, from its tensor shapes
    and non-tensor arguments: a forward (``constant_pad_nd``'s ``pad``, ``reflection_pad3d``'s ``padding``; one
    tensor) adds the padding to the trailing dims of its input; a backward (``grad_output, self, padding``: two
    tensors) has the output's shape as its first tensor. None when the call has no padding list."""
    pads = args.get("pad", args.get("padding"))
    if not shapes or not isinstance(pads, (list, tuple)) or len(pads) < 2:
        return None
    k = len(pads) // 2
    shape = tuple(shapes[0])
    if k > len(shape):
        return None
    if len(shapes) >= 2:  # a backward: grad_output is shaped as the forward's output
        return shape, k
    out = list(shape)
    for i in range(k):  # pads run from the last dim inward: (left, right) of dim -1, then dim -2, ...
        out[len(out) - 1 - i] += int(pads[2 * i]) + int(pads[2 * i + 1])
    return tuple(out), k


def extent(shapes: Sequence[tuple[int, ...]], args: Mapping[str, Any]) -> int:
    """``max(output last dim, product of output dims after the padded axis)`` of a padding call (PR #195147's
    measure); 0 when it is not a padding call."""
    got = output_shape(shapes, args)
    if got is None:
        return 0
    out, k = got
    if not out:
        return 0
    axis = len(out) - k
    return max(out[-1], prod(out[axis + 1:]))
