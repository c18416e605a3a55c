"""Generators and the default device (issue 33, item 4): the generator-device check of MPS's random kernels
(aten/src/ATen/core/Generator.h check_generator), judged by Judge.generator with the exact text and line."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

SHUFFLED = '''\
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.set_default_device("mps")
loader = DataLoader(TensorDataset(torch.arange(10.0)), batch_size=2, shuffle=True)
for (batch,) in loader:
    print(batch.device)
    break
'''


@pytest.mark.parametrize("rel", ["2.3", "2.13"])
def test_shuffled_dataloader_under_default_device_mps_fails_on_the_generator(tmp_path, rel):
    # RandomSampler: torch.randperm(n, generator=torch.Generator()) -> an MPS randperm with a CPU generator
    _, doc, out, _ = emulate(write(tmp_path, SHUFFLED), torch=rel)
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["op"], ff["exception"], ff["location"]["line"], out) == (
        "failed", "generator", "aten::randperm.generator", "RuntimeError", 5, "")
    assert ff["message"] == "Expected a 'mps:0' generator device but found 'cpu'"


def test_unshuffled_dataloader_and_matching_generators_complete(tmp_path):
    script = write(tmp_path, SHUFFLED.replace("shuffle=True", "shuffle=False"))
    _, doc, out, _ = emulate(script)
    assert (doc["outcome"], out) == ("completed", "mps:0\n")
    ok = write(tmp_path, '''\
import torch
g = torch.Generator("mps")
g.manual_seed(0)
p = torch.randperm(5, generator=g, device="mps")
q = torch.multinomial(torch.ones(4, device="mps"), 2, generator=g)
c = torch.randperm(5, generator=torch.Generator())
print(g.device, p.device, q.device, c.device)
''', "ok.py")
    _, doc, out, _ = emulate(ok)
    assert (doc["outcome"], out) == ("completed", "mps:0 mps:0 mps:0 cpu\n")


def test_mps_generator_with_a_cpu_op_and_cpu_generator_with_multinomial(tmp_path):
    script = write(tmp_path, '''\
import torch
g = torch.Generator("mps")
x = torch.randperm(5, generator=g)
''')
    _, doc, _, _ = emulate(script)
    ff = doc["first_failure"]
    assert (ff["kind"], ff["location"]["line"], ff["message"]) == (
        "generator", 3, "Expected a 'cpu' generator device but found 'mps:0'")
    script = write(tmp_path, '''\
import torch
probs = torch.ones(4, device="mps")
idx = torch.multinomial(probs, 1, generator=torch.Generator())
''', "multi.py")
    _, doc, _, _ = emulate(script)
    ff = doc["first_failure"]
    assert (ff["kind"], ff["op"], ff["location"]["line"], ff["message"]) == (
        "generator", "aten::multinomial", 3, "Expected a 'mps' device type for generator but found 'cpu'")
