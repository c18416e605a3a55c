"""Migrate planning time against the libcst parse floor, and against the number of edits in one file (issue 19).

Three measurements, CPU seconds of this process (the machine this was written on is shared: wall time
measures the neighbours), each the least of ``--repeat`` runs (as ``timeit`` reports):

1. **Tree.** A large tree: by default a synthetic one of ``--files`` research-style Python files written to a
   temporary folder (training scripts, models with ``.cuda()`` in ``forward``, data and utility modules with no
   CUDA at all), or ``--tree PATH`` (for instance a public repository copied to /tmp; never commit one). Prints
   - floor: ``libcst.parse_module`` of every .py file of the tree (the least any libcst migration does),
   - + positions: the same plus libcst's ``PositionProvider`` (migrate needs every node's position to find
     the scan's findings in the tree),
   - + qualified names: plus libcst's ``QualifiedNameProvider`` (the scope analysis the transforms ask for
     to resolve ``torch.device`` and ``torch.cuda.*`` through imports),
   - migrate: :func:`mpsready.migrate.engine.migrate_path` (scan included, nothing written),
   and migrate / floor (goal of issue 19: at most 1.5).
   With ``--no-providers`` the two provider lines are left out (on the torch package the qualified names alone
   take many minutes).
2. **Reuse.** ``mpsready migrate PATH --apply`` after ``mpsready migrate PATH``: what the second call costs
   when it writes the plan the first one stored (hash every file the scan reads, read the stored plan:
   :mod:`mpsready.migrate.stored`) against planning again (skipped for a checkout without that module).
3. **Edits.** One file with 250, 500 and 1,000 ``x = torch.ones(i).cuda()`` lines: migrate's CPU seconds, the
   seconds per edit, and the per-edit ratio to the 250-edit file (linear work keeps it near 1; one traversal of
   the file per edit, as before this issue, gives about 2 and 4).

    PYTHONPATH=src python benchmarks/migrate_bench.py [--tree PATH] [--files 300] [--edits 250,500,1000] [--repeat 3]
        [--no-providers]

Figures (issue 25, ``--no-providers --repeat 3``, CPU, paired with the version before on a heavily loaded 2-core
machine, four pairs): the synthetic tree 2.69x -> 2.00x of the floor (medians; 2.30x-2.76x -> 1.73x-2.33x);
pytorch-image-models copied to /tmp (315 files, 19 edits) 0.74x, 0.71x -> 0.67x, 0.52x; the one-file runs stay
linear (per-edit ratio of 1,000 edits to 250: 1.16, 1.17 -> 1.05, 1.06).

Issue 35 (one run plans until a round changes nothing: the ``round(s)`` on the tree line): real trees, paired
with the single-round version, CPU, two pairs each: PyTorch-GAN 1.37x, 1.52x (2 rounds); yunjey/pytorch-tutorial
1.20x, 1.25x (2 rounds); udacity/deep-learning-v2-pytorch 1.93x, 2.01x (3 rounds, 159 edits instead of 28).
The tree line is followed by ``one round only`` (the same run stopped after its first round) and ``rounds/one
round`` (goal of issue 35: at most 1.3). After round 2 stopped planning again the files round 1 changed (it
carries their records) and stopped parsing files where only the helper asks for MPS, paired with the version
before on the same loaded 2-core machine, least of 3: TRELLIS 1.55x -> 1.25x, 4DGaussians 1.85x -> 1.22x, mar
1.87x -> 1.28x, co-tracker 1.68x -> 1.20x (docs/migrate.md).

``--edits ""`` skips the one-file runs. The script runs the ``mpsready`` that ``PYTHONPATH`` names, so one copy
of it measures two checkouts side by side (``PYTHONPATH=/tmp/before/src``).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

TRAIN = '''"""Train {name} on {data}."""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from models.net{i} import Net{i}
from data.loader{i} import make_dataset


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default={epochs})
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--no-cuda", action="store_true")
    p.add_argument("--batch-size", type=int, default=64)
    return p.parse_args()


def evaluate(model, loader, device):
    model.eval()
    total, correct = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
            total += y.numel()
    return correct / max(total, 1)


def main():
    args = parse()
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    torch.manual_seed({i})
    torch.cuda.manual_seed_all({i})
    torch.backends.cudnn.benchmark = True
    train = DataLoader(make_dataset("train"), batch_size=args.batch_size, shuffle=True, pin_memory=True,
                       num_workers=4)
    test = DataLoader(make_dataset("test"), batch_size=args.batch_size, pin_memory=True)
    model = Net{i}().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(args.epochs):
        model.train()
        start = time.time()
        for step, (x, y) in enumerate(train):
            x, y = x.cuda(), y.cuda()
            opt.zero_grad()
            with torch.cuda.amp.autocast():
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            if step % 100 == 0:
                torch.cuda.synchronize()
                print(f"epoch {{epoch}} step {{step}} loss {{loss.item():.4f}} {{time.time() - start:.1f}} s")
        acc = evaluate(model, test, device)
        print(f"epoch {{epoch}}: accuracy {{acc:.3f}}")
        torch.save(model.state_dict(), os.path.join("checkpoints", f"{name}_{{epoch}}.pt"))
    state = torch.load(os.path.join("checkpoints", f"{name}_0.pt"))
    model.load_state_dict(state)


if __name__ == "__main__":
    main()
'''

MODEL = '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block{i}(nn.Module):
    def __init__(self, dim, heads=8, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.heads = heads
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q = q.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.triu(torch.ones(n, n), diagonal=1).bool().cuda()
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        out = (self.drop(att) @ v).transpose(1, 2).reshape(b, n, d)
        return x + self.proj(out)


class Net{i}(nn.Module):
    def __init__(self, dim={dim}, depth={depth}, classes=10):
        super().__init__()
        self.embed = nn.Linear(32, dim)
        self.blocks = nn.ModuleList([Block{i}(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)
        self.register_buffer("pos", torch.zeros(1, 64, dim))

    def forward(self, x):
        h = self.embed(x) + self.pos[:, : x.shape[1]]
        for blk in self.blocks:
            h = blk(h)
        return self.head(h.mean(1))

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
'''

UTIL = '''"""Helpers {i}: metrics, logging and data plumbing (no CUDA)."""
import json
import os
from collections import defaultdict

import numpy as np


class Meter{i}:
    def __init__(self):
        self.values = defaultdict(list)

    def add(self, **kw):
        for k, v in kw.items():
            self.values[k].append(float(v))

    def mean(self, key):
        vals = self.values.get(key, [])
        return sum(vals) / len(vals) if vals else float("nan")

    def dump(self, path):
        with open(path, "w") as fh:
            json.dump({{k: self.mean(k) for k in self.values}}, fh, indent=2)


def make_dataset(split, n={n}):
    rng = np.random.default_rng({i})
    x = rng.standard_normal((n, 64, 32)).astype(np.float32)
    y = rng.integers(0, 10, n)
    return list(zip(x, y))


def moving_average(xs, k=5):
    out = []
    for j in range(len(xs)):
        window = xs[max(0, j - k + 1): j + 1]
        out.append(sum(window) / len(window))
    return out
'''


def synthetic_tree(root: Path, files: int) -> Path:
    """About ``files`` Python files: a third each training scripts, models, data/utility modules."""
    for sub in ("models", "data", "scripts"):
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / "__init__.py").write_text("")
    (root / "requirements.txt").write_text("torch>=2.1\nnumpy\n")
    for i in range(max(files // 3, 1)):
        (root / "scripts" / f"train{i}.py").write_text(TRAIN.format(i=i, name=f"exp{i}", data=f"set{i}", epochs=10 + i))
        (root / "models" / f"net{i}.py").write_text(MODEL.format(i=i, dim=64 + i, depth=2 + i % 6))
        (root / "data" / f"loader{i}.py").write_text(UTIL.format(i=i, n=100 + i))
    return root


def edits_file(root: Path, n: int) -> Path:
    path = root / f"edits{n}" / "many.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import torch\n\n" + "".join(f"x{i} = torch.ones({i}).cuda()\n" for i in range(n)))
    return path.parent


def cpu(fn) -> float:
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def parse_floor(tree: Path, meta: tuple = ()) -> None:
    import libcst as cst

    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.endswith(".py"):
                continue
            try:
                text = Path(dirpath, name).read_text(encoding="utf-8")
                module = cst.parse_module(text)
                if meta:
                    cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve_many(meta)
            except Exception:  # noqa: BLE001, S112 - a file libcst cannot read costs what it cost
                continue


def reuse(tree: Path, plan, mig: float, repeat: int, cache: Path) -> None:
    """The cost of ``--apply`` writing the plan ``migrate PATH`` stored, against ``mig`` (planning again)."""
    try:
        from mpsready.migrate import stored
    except ImportError:
        print("  --apply after the show: this checkout plans again (no stored plan)")
        return
    from mpsready.scan.config import ScanConfig

    key = stored.key(tree, (), ())
    stored.save(cache, tree, plan, key, stored.read_inputs(tree, ScanConfig()))
    found: list = []
    t = min(cpu(lambda: found.append(stored.load(cache, tree, key, stored.read_inputs(tree, ScanConfig()))))
            for _ in range(repeat))
    assert found[-1].plan is not None and found[-1].plan.edits == plan.edits, found[-1].reason
    print(f"  --apply after the show        {t:8.2f} s CPU   (the stored plan reused: {t / mig:.3f} x planning again)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a tree to migrate (default: a synthetic one)")
    ap.add_argument("--files", type=int, default=300, help="files of the synthetic tree (default 300)")
    ap.add_argument("--edits", default="250,500,1000", help="edit counts of the one-file runs")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-providers", action="store_true", help="leave out the + positions / + qualified names lines")
    args = ap.parse_args(argv)

    from mpsready.migrate.engine import migrate_path

    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or synthetic_tree(Path(tmp) / "tree", args.files)
        # hidden folders inside the tree are skipped (as the floor's walk does); the tree's own path may have one
        pys = sum(1 for p in tree.rglob("*.py") if not any(part.startswith(".") for part in p.relative_to(tree).parts))
        migrate_path(tree)  # warm: imports, the scan's data files, libcst's grammar
        plans = []
        from libcst.metadata import PositionProvider, QualifiedNameProvider

        floor = min(cpu(lambda: parse_floor(tree)) for _ in range(args.repeat))
        if not args.no_providers:
            floor_pos = min(cpu(lambda: parse_floor(tree, (PositionProvider,))) for _ in range(args.repeat))
            floor_qn = min(cpu(lambda: parse_floor(tree, (PositionProvider, QualifiedNameProvider)))
                           for _ in range(args.repeat))
        mig = min(cpu(lambda: plans.append(migrate_path(tree))) for _ in range(args.repeat))
        plan = plans[-1]
        single = None
        if getattr(plan, "rounds", 1) > 1:  # the rounds' cost: the same plan stopped after its first round
            import mpsready.migrate.engine as engine

            rounds, engine.MAX_ROUNDS = engine.MAX_ROUNDS, 1
            try:
                single = min(cpu(lambda: migrate_path(tree)) for _ in range(args.repeat))
            finally:
                engine.MAX_ROUNDS = rounds
        print(f"tree {tree if args.tree else f'synthetic ({args.files} files asked)'}: {pys} .py files; "
              f"{plan.edits} edits in {len(plan.files)} files, {len(plan.errors)} not parsed; "
              f"{getattr(plan, 'rounds', 1)} round(s) to the fixed point")
        print(f"  floor (libcst parse)          {floor:8.2f} s CPU")
        if not args.no_providers:
            print(f"  + positions                   {floor_pos:8.2f} s CPU   ({floor_pos / floor:.2f} x floor)")
            print(f"  + qualified names             {floor_qn:8.2f} s CPU   ({floor_qn / floor:.2f} x floor)")
        print(f"  migrate (scan + plan)         {mig:8.2f} s CPU   migrate/floor {mig / floor:.2f} "
              f"(goal <= 1.5: {'met' if mig / floor <= 1.5 else 'NOT met'})"
              + ("" if args.no_providers else f"; migrate/(floor + positions + qualified names) {mig / floor_qn:.2f}"))
        if single is not None:
            print(f"  one round only                {single:8.2f} s CPU   rounds/one round {mig / single:.2f} "
                  f"(goal of issue 35 <= 1.3: {'met' if mig / single <= 1.3 else 'NOT met'})")
        reuse(tree, plan, mig, args.repeat, Path(tmp) / "cache")

        counts = [int(c) for c in args.edits.split(",") if c.strip()]
        base = None
        if counts:
            print("edits in one file   CPU s    ms/edit   per-edit ratio to the first")
        for n in counts:
            folder = edits_file(Path(tmp), n)
            out = []
            t = min(cpu(lambda out=out, folder=folder: out.append(migrate_path(folder))) for _ in range(args.repeat))
            assert out[-1].edits == n, (out[-1].edits, n)
            per = t / n
            base = base or per
            print(f"  {n:6d}          {t:7.2f}   {per * 1000:8.3f}   {per / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
