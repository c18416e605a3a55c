"""The ``m.impl`` registrations of a macOS arm64 wheel's MPS library blocks (maintainers only, never at run time).

    PYTHONPATH=src python -m mpsready.ops.build.macho torch-V-...-macosx_11_0_arm64.whl

What ``data/curated/mps_fallback.yaml`` holds per release, read from the binary as the research note's §2.3 and
Appendix C describe: the Mach-O symbol table (``LC_SYMTAB``, local symbols kept in PyTorch's wheels) names each
``TORCH_LIBRARY_IMPL(ns, MPS, m)`` block as ``...TORCH_LIBRARY_IMPL_init_<ns>_MPS_<uid>``; its arm64 code is walked,
tracking the addresses ``ADRP``/``ADD``/``ADR`` put in registers, and at each call of ``torch::Library::_impl`` the C
string in ``x1`` is the op name (``_fallback`` calls are the ``_`` block's fallbacks). A registration whose callees
since the previous one build a boxed ``CppFunction`` is a boxed CPU fallback, a typed one a typed kernel (the
``_slow_conv2d_forward`` guard). The code generator's blocks (in ``at::(anonymous)``, inlined, one per op group:
equal to the yaml's MPS set, research note §2.3) are left out. Checked: torch 2.3.1 gives the note's nine
registrations; torch 2.2.2 gives the same nine.

x86-64 images (the Intel Mac's wheels, 2.2.2 the last) are read more simply: the op names are the C strings that
``lea rsi, [rip+disp32]`` (``48 8D 35``: the second argument of ``_impl``) loads inside the block, in order; the kind
(boxed or typed) is not decoded. torch 2.2.2's x86_64 wheel gives the arm64 wheel's nine names in the same order.
"""

from __future__ import annotations

import argparse
import bisect
import re
import struct
import sys
import zipfile
from pathlib import Path

DYLIB = "torch/lib/libtorch_cpu.dylib"
_BLOCK = re.compile(r"TORCH_LIBRARY_IMPL_init_(aten|_)_MPS_")
_BOXED = re.compile(r"makeFromBoxed|CppFunctionC.EN3c1014KernelFunction")
_TYPED = re.compile(r"CppFunctionC.I")
MH_MAGIC_64, CPU_ARM64, CPU_X86_64, LC_SEGMENT_64, LC_SYMTAB = 0xFEEDFACF, 0x0100000C, 0x01000007, 0x19, 0x2
_LEA_RSI = re.compile(rb"\x48\x8d\x35(....)", re.S)  # lea rsi, [rip+disp32]
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9.]*")


def _simm(value: int, bits: int) -> int:
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def decode(ins: int, pc: int) -> tuple[str, int, int]:
    """One arm64 word -> (kind, register, value): ``adrp``/``adr`` (rd, address), ``add`` (rd, rn << 32 | imm),
    ``bl`` (0, target), else ``other``."""
    rd = ins & 0x1F
    if ins & 0x9F000000 in (0x90000000, 0x10000000):  # ADRP / ADR
        imm = _simm((((ins >> 5) & 0x7FFFF) << 2) | ((ins >> 29) & 3), 21)
        if ins & 0x80000000:
            return "adrp", rd, (pc & ~0xFFF) + (imm << 12)
        return "adr", rd, pc + imm
    if ins & 0xFF800000 == 0x91000000:  # ADD (immediate, 64-bit)
        imm = ((ins >> 10) & 0xFFF) << (12 * ((ins >> 22) & 1))
        return "add", rd, (((ins >> 5) & 0x1F) << 32) | imm
    if ins & 0xFC000000 == 0x94000000:  # BL
        return "bl", 0, pc + (_simm(ins & 0x3FFFFFF, 26) << 2)
    return "other", rd, 0


class MachO:
    """The segments and defined symbols of a 64-bit arm64 or x86-64 Mach-O image (bytes)."""

    def __init__(self, data: bytes):
        magic, cpu, _sub, _ftype, ncmds = struct.unpack_from("<IiiII", data, 0)
        if magic != MH_MAGIC_64 or cpu not in (CPU_ARM64, CPU_X86_64):
            raise ValueError("not a 64-bit arm64 or x86-64 Mach-O image")
        self.data, self.segs, self.x86 = data, [], cpu == CPU_X86_64
        off, symtab = 32, None
        for _ in range(ncmds):
            cmd, size = struct.unpack_from("<II", data, off)
            if cmd == LC_SEGMENT_64:
                vmaddr, _vmsize, fileoff, filesize = struct.unpack_from("<QQQQ", data, off + 24)
                self.segs.append((vmaddr, fileoff, filesize))
            elif cmd == LC_SYMTAB:
                symtab = struct.unpack_from("<IIII", data, off + 8)
            off += size
        if symtab is None:
            raise ValueError("no LC_SYMTAB")
        symoff, nsyms, stroff, _ = symtab
        syms = []
        for i in range(nsyms):
            strx, ntype, _sect, _desc, value = struct.unpack_from("<IBBHQ", data, symoff + 16 * i)
            if ntype & 0xE0 or (ntype & 0x0E) != 0x0E:  # debug entries, undefined symbols
                continue
            end = data.index(b"\0", stroff + strx)
            syms.append((value, data[stroff + strx:end].decode("latin-1")))
        syms.sort()
        self.syms, self.addrs = syms, [a for a, _ in syms]

    def offset(self, addr: int) -> int | None:
        for vmaddr, fileoff, filesize in self.segs:
            if vmaddr <= addr < vmaddr + filesize:
                return fileoff + addr - vmaddr
        return None

    def cstring(self, addr: int) -> str | None:
        off = self.offset(addr)
        return None if off is None else self.data[off:self.data.index(b"\0", off)].decode("latin-1")

    def symbol_at(self, addr: int) -> str:
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.syms[i][1] if i >= 0 else "?"

    def end_of(self, start: int) -> int:
        i = bisect.bisect_right(self.addrs, start)
        return self.addrs[i] if i < len(self.addrs) else start + 4096


def registrations(image: MachO) -> dict[str, list[tuple[str, str]]]:
    """``{block symbol: [(op name or "<fallback>", "boxed" | "typed" | "")]}`` for the hand-written MPS blocks."""
    out: dict[str, list[tuple[str, str]]] = {}
    for start, name in image.syms:
        if not _BLOCK.search(name) or ".cold" in name or name.startswith(("__ZZ", "__ZGVZ")):  # not the function
            continue
        if image.x86:
            if "_GLOBAL__N_" not in name:
                out[name] = _x86_names(image, start)
            continue
        regs: dict[int, int] = {}
        callees: list[str] = []
        found: list[tuple[str, str]] = []
        for pc in range(start, image.end_of(start), 4):
            off = image.offset(pc)
            if off is None:
                break
            kind, rd, value = decode(struct.unpack_from("<I", image.data, off)[0], pc)
            if kind in ("adrp", "adr"):
                regs[rd] = value
            elif kind == "add":
                rn, imm = value >> 32, value & 0xFFFFFFFF
                if rn in regs:
                    regs[rd] = regs[rn] + imm
                else:
                    regs.pop(rd, None)
            elif kind == "bl":
                callee = image.symbol_at(value)
                if "7Library5_impl" in callee:
                    op = image.cstring(regs[1]) if 1 in regs else None
                    how = ("boxed" if any(_BOXED.search(c) for c in callees)
                           else "typed" if any(_TYPED.search(c) for c in callees) else "")
                    found.append((op or "?", how))
                    callees = []
                elif "7Library9_fallback" in callee:
                    found.append(("<fallback>", ""))
                    callees = []
                else:
                    callees.append(callee)
                for r in range(19):  # caller-saved registers are clobbered by the call
                    regs.pop(r, None)
        if "_GLOBAL__N_" in name and not any(how for _, how in found):
            continue  # a code generator's block: inlined kernels, the yaml's set
        out[name] = found
    return out


def _x86_names(image: MachO, start: int) -> list[tuple[str, str]]:
    """The op names an x86-64 block loads into ``rsi`` (module docstring), kind unknown (``""``)."""
    first, last = image.offset(start), image.offset(image.end_of(start))
    if first is None or last is None:
        return []
    names = []
    for m in _LEA_RSI.finditer(image.data, first, last):
        text = image.cstring(start + (m.end() - first) + struct.unpack("<i", m.group(1))[0])
        if text and _OP_NAME.fullmatch(text):
            names.append((text, ""))
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mpsready.ops.build.macho", description=__doc__.splitlines()[0])
    ap.add_argument("wheel", type=Path, help="a macOS arm64 torch wheel, or its libtorch_cpu.dylib")
    args = ap.parse_args(argv)
    try:
        if args.wheel.suffix == ".whl":
            with zipfile.ZipFile(args.wheel) as zf:
                data = zf.read(DYLIB)
        else:
            data = args.wheel.read_bytes()
        blocks = registrations(MachO(data))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        print(f"{args.wheel}: {exc}", file=sys.stderr)
        return 2
    for name, regs in blocks.items():
        print(name)
        for op, how in regs:
            print(f"    {op} {how}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
