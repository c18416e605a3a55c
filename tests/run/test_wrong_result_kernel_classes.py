"""Silent wrong results by class (issue 33, 33a): each class with a fixture of our own and a look-alike that must
not be named. The classes: a batch norm backward of a channels_last input (pytorch#175189, PR #188371), a 2-D
convolution with a kernel dim of 256 or more (PR #188359), bfloat16 nextafter (pytorch#190476, #190740), nonzero
past 2**24 elements (pytorch#122916, #140570, PR #178484)."""

from __future__ import annotations

import pytest

from .helpers import emulate, write


def _named(tmp_path, body, torch, macos="15.5"):
    script = write(tmp_path, "import torch\nimport torch.nn.functional as F\n\ndev = \"mps\"\n" + body)
    _, doc, _, _ = emulate(script, torch=torch, macos=macos)
    assert (doc["outcome"], doc["first_failure"], doc["unverified"]) == ("completed", None, [])
    return [(w["id"], w["op"], w["dtype"], w["location"]["line"], w["fixed_in"]) for w in doc["wrong_results"]]


BN_BACKWARD = """\
bn = torch.nn.BatchNorm2d(3).to(dev)
x = torch.randn(2, 3, 4, 4).to(dev){layout}.requires_grad_(True)
bn(x).sum().backward()
print(bn.weight.grad.tolist())
"""


@pytest.mark.parametrize(("layout", "torch", "named"), [
    (".to(memory_format=torch.channels_last)", "2.10", True),
    (".permute(0, 1, 3, 2)", "2.13", True),
    (".to(memory_format=torch.channels_last)", "2.14", False),  # fixed (PR #188371)
    ("", "2.10", False),  # look-alike: a contiguous input (its expanded gradient is not the input)
])
def test_batch_norm_backward_of_a_channels_last_input(tmp_path, layout, torch, named):
    got = _named(tmp_path, BN_BACKWARD.format(layout=layout), torch)
    assert got == ([("batch-norm-backward-channels-last", "aten::native_batch_norm_backward", "float32", 7, "2.14.0")]
                   if named else [])


@pytest.mark.parametrize(("kernel", "named"), [((1, 256), True), ((256, 1), True), ((1, 255), False)])
def test_a_convolution_with_a_kernel_dim_of_256(tmp_path, kernel, named):
    body = (f"x = torch.randn(1, 1, 300, 300, device=dev)\nw = torch.randn(1, 1, {kernel[0]}, {kernel[1]}, device=dev)\n"
            "y = F.conv2d(x, w)\nprint(y.shape)\n")
    got = _named(tmp_path, body, "2.13")
    assert got == ([("conv2d-kernel-dim-256", "aten::_mps_convolution", "float32", 7, None)] if named else [])


NEXTAFTER = """\
a = torch.tensor([{start}, 2.0], dtype=torch.{dtype}, device=dev)
b = torch.nextafter(a, torch.full_like(a, float("inf")))
print(b.tolist())
"""


@pytest.mark.parametrize(("dtype", "start", "torch", "named"), [
    ("bfloat16", "1.0", "2.13", "nextafter-bfloat16-noop"),
    ("float16", "1.0", "2.13", None),  # look-alike: float16 steps right
    ("bfloat16", "1.0", "2.14", None),  # fixed (PR #190481)
    ("bfloat16", "0.0", "2.14", "nextafter-bfloat16-from-zero"),  # pytorch#190740, in no shipped release
])
def test_nextafter_on_bfloat16(tmp_path, dtype, start, torch, named):
    got = _named(tmp_path, NEXTAFTER.format(dtype=dtype, start=start), torch)
    assert [g[0] for g in got] == ([named] if named else [])
    if named:
        assert got[0][1:4] == ("aten::nextafter", "bfloat16", 6)


@pytest.mark.parametrize(("n", "torch", "named"), [
    ((1 << 24) + 8, "2.4", True), ((1 << 24) + 8, "2.11", True), ((1 << 24) + 8, "2.12", False),
    ((1 << 24) - 8, "2.4", False)])
def test_nonzero_past_2_pow_24_elements(tmp_path, n, torch, named):
    body = f"m = torch.zeros({n}, dtype=torch.bool)\nm[-1] = True\nidx = torch.where(m.to(dev))[0]\nprint(idx.cpu())\n"
    got = _named(tmp_path, body, torch)
    assert got == ([("nonzero-large-input", "aten::nonzero", "bool", 7, "2.12.0")] if named else [])


def test_a_memory_format_change_of_an_mps_tensor_stays_on_mps(tmp_path):
    # Tensor.to(memory_format=...) reaches aten::_to_copy with device= the tensor's own device (this CPU's here): it
    # was read as a copy off MPS, and the next op with an MPS module failed with a placement error (a false failure)
    got = _named(tmp_path, "x = torch.randn(2, 3, 4, 4).to(dev).to(memory_format=torch.channels_last)\n"
                           "print(x.device, x.is_contiguous(memory_format=torch.channels_last))\n"
                           "y = torch.nn.BatchNorm2d(3).to(dev)(x)\nprint(y.device)\n", "2.13")
    assert got == []
