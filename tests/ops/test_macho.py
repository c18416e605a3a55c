"""The arm64 decoding of ``mpsready.ops.build.macho`` (how the MPSFallback.mm list of 2.2.2 was read, research note
Appendix C): exact register values for hand-assembled words."""
from __future__ import annotations

import pytest

from mpsready.ops.build.macho import MachO, decode, main


def test_adrp_add_bl_adr():
    # adrp x1, #0x2000 (page of pc 0x1000 + 2 pages); add x1, x1, #0x10; bl #+0x40; adr x3, #+8
    assert decode(0xB0000001 | (0 << 29), 0x1000)[:2] == ("adrp", 1)
    adrp = 0x90000000 | (1 << 5) | 1  # immhi=1, immlo=0 -> imm = 4 pages
    assert decode(adrp, 0x1234) == ("adrp", 1, 0x1000 + (4 << 12))
    assert decode(0x91004021, 0) == ("add", 1, (1 << 32) | 0x10)
    assert decode(0x94000010, 0x2000) == ("bl", 0, 0x2000 + 0x40)
    assert decode(0x97FFFFFF, 0x2000) == ("bl", 0, 0x2000 - 4)
    assert decode(0x10000043, 0x3000) == ("adr", 3, 0x3000 + 8)
    assert decode(0xD503201F, 0)[0] == "other"  # nop


def test_refuses_what_is_not_a_mach_o_image(tmp_path, capsys):
    with pytest.raises(ValueError, match="not a 64-bit arm64 or x86-64 Mach-O image"):
        MachO(b"\x7fELF" + bytes(64))
    f = tmp_path / "libtorch_cpu.dylib"
    f.write_bytes(b"\xcf\xfa\xed\xfe" + (0x01000007).to_bytes(4, "little") + bytes(64))  # x86-64, no commands
    assert main([str(f)]) == 2
    assert capsys.readouterr().err == f"{f}: no LC_SYMTAB\n"


def test_x86_64_block_names_come_from_lea_rsi():
    # a fake image: one MPSFallback-like block at 0x100 loading "linalg_svd.U" (at 0x200) into rsi, then a call
    import struct

    from mpsready.ops.build import macho

    data = bytearray(0x300)
    disp = 0x200 - (0x100 + 7)  # rip after the 7-byte lea
    data[0x100:0x107] = b"\x48\x8d\x35" + struct.pack("<i", disp)
    data[0x107:0x10C] = b"\xe8\x00\x00\x00\x00"
    data[0x200:0x20D] = b"linalg_svd.U\x00"
    image = MachO.__new__(MachO)
    image.data, image.segs, image.x86 = bytes(data), [(0, 0, len(data))], True
    block = "__ZN2atL34TORCH_LIBRARY_IMPL_init_aten_MPS_3ERN5torch7LibraryE"
    image.syms = [(0x100, block), (0x110, "__ZN2at4nextEv")]
    image.addrs = [0x100, 0x110]
    assert macho.registrations(image) == {block: [("linalg_svd.U", "")]}
