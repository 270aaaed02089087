"""pycode_seeds.py: seed images for tests/fuzz/fuzz_pycode.c, one per CPython
layout the walker has, each a code object of real shape: its type named
"code", a compact ASCII qualified name and file name, a first line and a
line table (the bytes CPython 3.11 writes for a small function; 3.10's
pair form for 3.10). Pointers are words with 0xa5 in their top byte and the
offset in the image below (see fuzz_pycode.c). Offsets come from
build/tests/test_pylayout --dump.
    python3 tests/fuzz/pycode_seeds.py build/tests/test_pylayout tests/fuzz/corpus/pycode
"""
import struct, subprocess, sys

def ptr(off):
    return struct.pack("<Q", (0xA5 << 56) | off)

def image(fields, minor):
    img = bytearray(4096)
    code = 8
    def put(off, b):
        img[off:off + len(b)] = b
    def str_obj(off, text):
        put(off + 16, struct.pack("<Q", len(text)))
        put(off + 32, struct.pack("<I", 4 | 32 | 64))  # kind 1, compact, ascii
        put(off + fields["ascii_size"], text.encode())
    typ, tpname, qual, fname, tab = 1024, 1200, 1300, 1500, 1800
    put(code + 8, ptr(typ))
    put(typ + 24, ptr(tpname))
    put(tpname, b"code\0")
    put(code + fields["co_name"], ptr(qual))
    if fields["co_qualname"] >= 0:
        put(code + fields["co_qualname"], ptr(qual))
    put(code + fields["co_filename"], ptr(fname))
    put(code + fields["co_firstlineno"], struct.pack("<i", 10))
    put(code + fields["co_linetable"], ptr(tab))
    str_obj(qual, "Spin.fib")
    str_obj(fname, "/srv/app/spin.py")
    table = bytes([6, 1, 8, 1, 10, 1]) if minor == 10 else \
        bytes([0x80, 0x00, 0xD8, 0x0B, 0x0C, 0x88, 0x71, 0xD8, 0x0F, 0x10])
    put(tab + 16, struct.pack("<Q", len(table)))
    put(tab + 32, table)
    return bytes(img)

dump = subprocess.run([sys.argv[1], "--dump"], capture_output=True, text=True, check=True).stdout
for k, line in enumerate(dump.splitlines()):
    version, *kv = line.split()
    fields = {a: int(b) for a, b in (x.split("=") for x in kv)}
    with open(f"{sys.argv[2]}/seed-{version}", "wb") as f:
        f.write(bytes([k]) + image(fields, int(version.split(".")[1])))
