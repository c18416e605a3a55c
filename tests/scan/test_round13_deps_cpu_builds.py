"""Issue 32, round 13 (dependencies): graph libraries with CPU builds for macOS are no CUDA-only packages
(docs/scan.md, "round 13"). Their compiled ops take CPU tensors: a model that calls one is an edit (a CPU round
trip), never stay_on_cuda; plain-PyTorch functions of the package (torch_scatter's sum/mean scatter) cost nothing.
Each fixture has a look-alike that keeps a limit. Fixtures written for these tests."""

from __future__ import annotations

from mpsready.scan import knowledge, scan_path

README = "# demo\n\n```bash\npip install -r requirements.txt\npython train.py\n```\n"
TRAIN = ("import torch\n\nfrom pkg.model import Net\n\n\n"
         "def main():\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    net = Net().to(dev)\n    print(net(torch.zeros(8, 3, device=dev)))\n\n\n"
         "if __name__ == \"__main__\":\n    main()\n")
# a model whose forward calls a graph-library op with no other path
MODEL = ("import torch\n{imports}\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.lin = torch.nn.Linear(3, 3)\n\n"
         "    def forward(self, x):\n        batch = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)\n"
         "{body}\n        return self.lin(x)\n")


def _scan(write_project, imports: str, body: str, requirements: str = "torch\ntorch-cluster\ntorch-scatter\n",
          extra: dict | None = None):
    files = {"train.py": TRAIN, "pkg/__init__.py": "", "pkg/model.py": MODEL.format(imports=imports, body=body),
             "requirements.txt": requirements, "README.md": README, **(extra or {})}
    return scan_path(write_project(files))


def _deps(r):
    return sorted((f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings
                  if f.code.startswith("DEP"))


def test_the_knowledge_base_records_cpu_builds_with_sources():
    for name in ("torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib", "dgl"):
        entry = knowledge.lookup(name)
        assert (entry.status, entry.severity.value) == ("cpu_build", "degrades"), name
        assert "checked 2026-12-08" in entry.source
    assert knowledge.lookup("torch-scatter").pure_ops == ("scatter", "scatter_sum", "scatter_add", "scatter_mean")
    assert knowledge.lookup_import("dgl.function").name == "dgl"
    assert knowledge.lookup("dgl-cu118").name == "dgl-cu"  # a CUDA build's name still has no macOS build


def test_a_compiled_graph_op_in_the_model_is_an_edit_not_stay_on_cuda(write_project):
    # look-alike of the rule: the main path does call the op, so it limits, but as a CPU round trip
    r = _scan(write_project, "from torch_cluster import radius_graph",
              "        edges = radius_graph(x, r=1.0, batch=batch)\n        x = x + edges.sum() * 0")
    assert _deps(r) == [("DEP102", "requirements.txt", 2, "degrades"), ("DEP102", "requirements.txt", 3, "degrades"),
                        ("DEP107", "pkg/model.py", 2, "blocker")]
    [f] = r.limiting
    assert f.evidence["cpu_op"] == "radius_graph in Net.forward (pkg/model.py:12)"
    assert f.remedy == {"kind": "edit", "migrate": False,
                        "what": "run radius_graph on CPU tensors (move its inputs to the CPU and the result back to "
                                "the device), or use torch.cdist + torch.topk for knn/radius on MPS, or the op on CPU "
                                "tensors"}
    assert "no_alternative" not in f.evidence
    assert r.outlook.value == "mac_for_dev"


def test_a_declared_cpu_build_without_an_alternative_no_longer_keeps_the_project_on_cuda(write_project):
    # torch-spline-conv used to be a blocker with no alternative (stay_on_cuda) from its declaration alone
    r = _scan(write_project, "", "        x = x * 1", requirements="torch\ntorch-spline-conv==1.2.2\n")
    assert _deps(r) == [("DEP102", "requirements.txt", 2, "degrades")]
    assert r.outlook.value == "runs_on_mac"


def test_plain_pytorch_scatter_functions_cost_nothing(write_project):
    r = _scan(write_project, "import torch_scatter\nfrom torch_scatter import scatter",
              "        x = x + scatter(x, batch, dim=0, dim_size=x.shape[0])\n"
              "        x = x + torch_scatter.scatter_mean(x, batch, dim=0, dim_size=x.shape[0])")
    assert _deps(r) == [("DEP102", "requirements.txt", 2, "degrades"), ("DEP102", "requirements.txt", 3, "degrades"),
                        ("DEP107", "pkg/model.py", 2, "degrades")]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_max_reduction_reaches_the_compiled_op(write_project):
    r = _scan(write_project, "from torch_scatter import scatter",
              "        x = x + scatter(x, batch, dim=0, dim_size=x.shape[0], reduce=\"max\")")
    [f] = r.limiting
    assert (f.code, f.location.line, f.evidence["cpu_op"]) == ("DEP107", 2, "scatter in Net.forward (pkg/model.py:12)")
    assert r.outlook.value == "mac_for_dev"


def test_a_graph_op_in_data_preparation_costs_nothing(write_project):
    # not a model file: the op runs where the data is made, on CPU tensors
    prep = "import torch\nfrom torch_cluster import knn_graph\n\n\ndef edges(pos):\n    return knn_graph(pos, k=4)\n"
    r = _scan(write_project, "from pkg.prep import edges", "        x = x + edges(x.cpu()).sum().to(x.device) * 0",
              extra={"pkg/prep.py": prep})
    assert [(f.code, f.location.path, f.severity.value) for f in r.findings if f.code == "DEP107"] == [
        ("DEP107", "pkg/prep.py", "degrades")]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_cuda_build_of_a_cpu_build_package_is_pinned(write_project):
    # the package installs on a Mac, the +cu build the pin names does not: a swap of the pin (mac_for_dev)
    r = _scan(write_project, "", "        x = x * 1", requirements="torch\ntorch-scatter==2.1.0+pt113cu117\n")
    assert _deps(r) == [("DEP104", "requirements.txt", 2, "blocker")]
    [f] = r.limiting
    assert f.remedy == {"kind": "swap", "what": "leave it out on the Mac"}
    assert r.outlook.value == "mac_for_dev"
