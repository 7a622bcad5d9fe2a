"""OS-level confinement a sandbox process applies to itself before it loads an untrusted kernel.

Layers, each best-effort and reported (never silently assumed):
- resource limits: address space, CPU seconds, bytes written per file, no core dumps;
- seccomp filter: no new processes (fork/vfork/clone without CLONE_THREAD), no exec, no sockets,
  no ptrace / process_vm_* / kill, so a kernel can neither fork-bomb, reach the network nor read
  or signal the trusted parent;
- Landlock (Linux >= 5.13): the file system is read-only outside the working directory and only
  the Python installation and this package are readable, so a kernel cannot read cached reference
  outputs or other evaluations' files; TCP and cross-domain signals are denied where the ABI allows.
Stdlib only: this runs in the child, where start-up time is part of every evaluation.
"""
from __future__ import annotations

import ctypes
import os
import platform
import resource
import struct
import sys
from pathlib import Path

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_CLONE_THREAD = 0x00010000


def _ret_errno(err: int) -> int:
    return 0x00050000 | err


# Syscalls a kernel never needs, per architecture: (audit arch, {name: number}).
_SYSCALLS = {
    "x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "socket": 41,
                            "ptrace": 101, "kill": 62, "process_vm_readv": 310,
                            "process_vm_writev": 311, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {"execve": 221, "execveat": 281, "socket": 198, "ptrace": 117,
                             "kill": 129, "process_vm_readv": 270, "process_vm_writev": 271,
                             "clone": 220, "clone3": 435}),
}

_libc = ctypes.CDLL(None, use_errno=True)


def set_resource_limits(*, memory_limit_mb: int | None, cpu_limit_s: int, file_limit_mb: int) -> dict:
    """Cap address space (unless None), CPU time and any file's size; disable core dumps."""
    limits = {
        resource.RLIMIT_CPU: cpu_limit_s,
        resource.RLIMIT_FSIZE: file_limit_mb << 20,
        resource.RLIMIT_CORE: 0,
    }
    if memory_limit_mb is not None:
        limits[resource.RLIMIT_AS] = memory_limit_mb << 20
    for which, value in limits.items():
        soft, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))
    return {"memory_limit_mb": memory_limit_mb, "cpu_limit_s": cpu_limit_s,
            "file_limit_mb": file_limit_mb}


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program(machine: str) -> list[bytes]:
    """Build the BPF filter for `machine` (pure; tested on its own)."""
    ld_w_abs, jeq_k, jset_k, ret_k = 0x20, 0x15, 0x45, 0x06
    arch, nr = _SYSCALLS[machine]
    eperm = _ret_errno(1)
    prog = [_bpf(ld_w_abs, 0, 0, 4), _bpf(jeq_k, 1, 0, arch), _bpf(ret_k, 0, 0, _RET_ALLOW),
            _bpf(ld_w_abs, 0, 0, 0)]
    for name, number in nr.items():
        if name == "clone":
            continue
        # clone3 answers ENOSYS so libc falls back to clone, whose flags BPF can inspect.
        action = _ret_errno(38) if name == "clone3" else eperm
        prog += [_bpf(jeq_k, 0, 1, number), _bpf(ret_k, 0, 0, action)]
    prog += [_bpf(jeq_k, 0, 4, nr["clone"]), _bpf(ld_w_abs, 0, 0, 16),
             _bpf(jset_k, 1, 0, _CLONE_THREAD), _bpf(ret_k, 0, 0, eperm),
             _bpf(ret_k, 0, 0, _RET_ALLOW), _bpf(ret_k, 0, 0, _RET_ALLOW)]
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp() -> str:
    """Install the filter; return "on" or why it is off."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        return f"off: no syscall table for {machine}"
    code = b"".join(seccomp_program(machine))
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"off: no_new_privs failed ({os.strerror(ctypes.get_errno())})"
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"off: seccomp failed ({os.strerror(ctypes.get_errno())})"
    return "on"


_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446  # same numbers on x86_64 and aarch64
_FS_FILE_RIGHTS = {1: 0b111, 3: 0b100_0000_0000_0111, 5: 0b1100_0000_0000_0111}
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read dir


def _fs_all(abi: int) -> int:
    bits = (1 << 13) - 1
    if abi >= 2:
        bits |= 1 << 13  # REFER
    if abi >= 3:
        bits |= 1 << 14  # TRUNCATE
    if abi >= 5:
        bits |= 1 << 15  # IOCTL_DEV
    return bits


def _file_rights(abi: int) -> int:
    return next(v for k, v in sorted(_FS_FILE_RIGHTS.items(), reverse=True) if abi >= k)


def landlock_abi() -> int:
    """Return the kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    abi = _libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(abi), 0)


def install_landlock(*, read_paths: list[str], write_paths: list[str]) -> str:
    """Restrict file access to `read_paths` (read/execute) and `write_paths` (all); deny TCP."""
    abi = landlock_abi()
    if abi < 1:
        return "off: Landlock unavailable in this kernel"
    fs_all = _fs_all(abi)
    net = 0b11 if abi >= 4 else 0
    scoped = 0b11 if abi >= 6 else 0
    attr = struct.pack("QQQ", fs_all, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = _libc.syscall(_LL_CREATE, attr[:size], ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return f"off: create_ruleset failed ({os.strerror(ctypes.get_errno())})"
    try:
        for paths, rights in ((read_paths, _FS_READ), (write_paths, fs_all)):
            for path in dict.fromkeys(paths):
                if not os.path.exists(path):
                    continue
                allowed = rights if os.path.isdir(path) else rights & _file_rights(abi)
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    rule = struct.pack("=Qi", allowed, pfd)
                    if _libc.syscall(_LL_ADD_RULE, fd, 1, rule, 0) != 0:
                        return f"off: add_rule {path} failed ({os.strerror(ctypes.get_errno())})"
                finally:
                    os.close(pfd)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return "off: no_new_privs failed"
        if _libc.syscall(_LL_RESTRICT, fd, 0) != 0:
            return f"off: restrict_self failed ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(fd)
    return f"on (abi {abi})"


def python_read_paths(package_files: list[str]) -> list[str]:
    """Directories the interpreter needs to keep importing: stdlib, site-packages, our package."""
    paths = [p for p in sys.path if p and os.path.isabs(p)]
    paths += [sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr/lib", "/usr/lib64", "/lib",
              "/lib64", "/usr/local/lib", "/dev/null", "/dev/urandom",
              f"/proc/{os.getpid()}"]  # its own /proc entry only (threadpoolctl reads maps)
    paths += [str(Path(f).resolve().parent) for f in package_files]
    return paths


def confine(*, level: str, workdir: str, package_files: list[str], memory_limit_mb: int,
            cpu_limit_s: int, file_limit_mb: int) -> dict:
    """Apply the layers of `level` ("strict" or "toolchain"); return what was applied."""
    if level == "toolchain":
        return {"rlimits": set_resource_limits(memory_limit_mb=None, cpu_limit_s=cpu_limit_s,
                                               file_limit_mb=file_limit_mb),
                "landlock": "off: toolchain level", "seccomp": "off: toolchain level"}
    report = {"rlimits": set_resource_limits(memory_limit_mb=memory_limit_mb,
                                             cpu_limit_s=cpu_limit_s, file_limit_mb=file_limit_mb)}
    report["landlock"] = install_landlock(read_paths=python_read_paths(package_files),
                                          write_paths=[workdir])
    report["seccomp"] = install_seccomp()
    return report
