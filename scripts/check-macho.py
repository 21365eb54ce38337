#!/usr/bin/env python3
"""Check a thin Mach-O executable without a Mac: CPU type, minimum macOS
version (LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX), linked dylibs, and, when
an ad-hoc code signature is present, that its page hashes match the file
(arm64 macOS refuses to run a binary whose signature strip broke).

Usage: check-macho.py [--arch x86_64|arm64] [--max-minos 11.0] FILE...
Exit 1 on any mismatch. Standard library only.
"""
import argparse
import hashlib
import struct
import sys

CPU = {0x01000007: "x86_64", 0x0100000C: "arm64"}


def ver(x):
    return f"{x >> 16}.{(x >> 8) & 0xff}.{x & 0xff}"


def ver_tuple(s):
    parts = [int(p) for p in s.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def check(path, want_arch, max_minos):
    data = open(path, "rb").read()
    ok = True
    magic, cputype, _sub, ftype, ncmds, _sz, _flags, _res = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != 0xFEEDFACF:
        print(f"{path}: not a 64-bit Mach-O (magic {magic:#x})")
        return False
    arch = CPU.get(cputype, hex(cputype))
    print(f"{path}: Mach-O 64 {arch} filetype={ftype} ncmds={ncmds}")
    if want_arch and arch != want_arch:
        print(f"  arch is {arch}, expected {want_arch}")
        ok = False
    off, sig, minos = 32, None, None
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", data, off)
        if cmd == 0x32:  # LC_BUILD_VERSION
            _plat, minos, sdk = struct.unpack_from("<III", data, off + 8)
            print(f"  LC_BUILD_VERSION minos={ver(minos)} sdk={ver(sdk)}")
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX
            minos, sdk = struct.unpack_from("<II", data, off + 8)
            print(f"  LC_VERSION_MIN_MACOSX version={ver(minos)} sdk={ver(sdk)}")
        elif cmd in (0xC, 0x80000018):  # LC_LOAD_DYLIB / LC_LOAD_WEAK_DYLIB
            name_off = struct.unpack_from("<I", data, off + 8)[0]
            print("  dylib", data[off + name_off: off + cmdsize].split(b"\0")[0].decode())
        elif cmd == 0x1D:  # LC_CODE_SIGNATURE
            sig = struct.unpack_from("<II", data, off + 8)
        off += cmdsize
    if minos is None:
        print("  no minimum macOS version recorded")
        ok = False
    elif max_minos and ver_tuple(ver(minos)) > ver_tuple(max_minos):
        print(f"  minimum macOS {ver(minos)} is newer than {max_minos}")
        ok = False
    if sig is None:
        if arch == "arm64":
            print("  no code signature: arm64 macOS refuses to run it")
            ok = False
        else:
            print("  no code signature (fine for x86_64)")
        return ok
    dataoff, datasize = sig
    sb = data[dataoff:dataoff + datasize]
    smagic, _len, count = struct.unpack_from(">III", sb, 0)
    if smagic != 0xFADE0CC0:
        print(f"  bad signature superblob magic {smagic:#x}")
        return False
    sig_ok, seen = True, False
    for i in range(count):
        _typ, boff = struct.unpack_from(">II", sb, 12 + 8 * i)
        if struct.unpack_from(">I", sb, boff)[0] != 0xFADE0C02:  # CodeDirectory
            continue
        (_m, _l, _version, cdflags, hash_off, _ident, _nspecial, ncode,
         code_limit, hash_size, hash_type, _plat, page_shift) = struct.unpack_from(">IIIIIIIIIBBBB", sb, boff)
        algo = {1: hashlib.sha1, 2: hashlib.sha256}[hash_type]
        psz, bad = 1 << page_shift, 0
        for n in range(ncode):
            page = data[n * psz: min((n + 1) * psz, code_limit)]
            want = sb[boff + hash_off + n * hash_size: boff + hash_off + (n + 1) * hash_size]
            bad += algo(page).digest()[:hash_size] != want
        print(f"  CodeDirectory adhoc={bool(cdflags & 2)} pages={ncode} bad_pages={bad}")
        seen = True
        sig_ok &= bad == 0 and code_limit == dataoff
    sig_ok &= seen
    print("  signature page hashes:", "VALID" if sig_ok else "BROKEN")
    return ok and sig_ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch")
    ap.add_argument("--max-minos")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    results = [check(f, a.arch, a.max_minos) for f in a.files]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
