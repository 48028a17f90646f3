"""BSPlib for Python programs: bspkit's libbsp on NumPy arrays and other buffers.

    from bspkit import bsp

    bsp.begin()
    p, s = bsp.nprocs(), bsp.pid()
    partial = np.zeros(p)
    bsp.push_reg(partial)
    bsp.sync()
    bsp.put(0, np.array([float(s)]), partial, s)  # into partial[s] on process 0
    bsp.sync()
    bsp.end()

Run it with `bsprun -b procs -n 4 python prog.py` (or `-b mpi`), or directly: a Python
program runs on the procs back end unless BSPKIT_BACKEND says otherwise (the threads back
end would make every BSP process a thread of one interpreter, which cannot run them).
Offsets and sizes are in elements of the registered array; every call that BSPlib may refuse
raises BspError with the library's message, and an exception that nobody catches inside the
SPMD section ends the whole run with one line and status 1, as a C program's error does.
docs/python.md is the user's page.

The library is called by ctypes (cffi was measured and not faster: bench/python_call_overhead.py).
The calls that cannot block (put, get, send, ...) go through a PyDLL handle, which keeps the
GIL (releasing and taking it back would cost more than the call); sync, end and the
collectives release it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from operator import index
from pathlib import Path
from types import TracebackType
from typing import Any, TypeAlias

import numpy as np

__all__ = [
    "BspError",
    "abort",
    "backend",
    "begin",
    "broadcast",
    "end",
    "get",
    "get_tag",
    "hpget",
    "hpput",
    "messages",
    "move",
    "nprocs",
    "packing",
    "pid",
    "pop_reg",
    "profile_phase",
    "push_reg",
    "put",
    "qsize",
    "reduce",
    "run",
    "send",
    "set_tagsize",
    "superstep",
    "sync",
    "time",
]

# What the data arguments take: a NumPy array or any object with the buffer protocol.
Buffer: TypeAlias = np.ndarray | bytes | bytearray | memoryview

INT_MAX = 2**31 - 1  # bsp_size_t and bsp_pid_t are C ints: larger values would be cut silently


class BspError(RuntimeError):
    """A BSPlib call was refused: the message is the library's line ("bspkit: error in bsp_put
    on process 1: ...") or, for what only Python can check, one in the same form."""


# ---------------------------------------------------------------- finding and loading libbsp

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_LIB_DIR = PACKAGE_DIR / "_lib"  # where `pip install .` puts libbsp and the MPI plugin


def library_candidates() -> list[tuple[str, Path | None]]:
    """Where libbsp is looked for, in order: (what the place is, the file or None)."""
    places: list[tuple[str, Path | None]] = []
    explicit = os.environ.get("BSPKIT_LIBBSP")
    if explicit:
        return [("$BSPKIT_LIBBSP", Path(explicit))]
    bundled = sorted(BUNDLED_LIB_DIR.glob("libbsp.so*"), key=lambda path: len(path.name))
    places.append(("the package's _lib/", bundled[0] if bundled else BUNDLED_LIB_DIR / "libbsp.so"))
    build_dir = os.environ.get("BSPKIT_BUILD_DIR")
    if build_dir:
        places.append(("$BSPKIT_BUILD_DIR", Path(build_dir) / "src" / "libbsp.so"))
    places.append(("the repository's build/", PACKAGE_DIR.parents[1] / "build" / "src" / "libbsp.so"))
    found = ctypes.util.find_library("bsp")
    places.append(("the system's libraries (find_library)", Path(found) if found else None))
    return places


def load_library() -> tuple[ctypes.CDLL, ctypes.PyDLL, Path]:
    """libbsp from the first place of library_candidates() that has it, twice: one handle
    that releases the GIL in calls, one that keeps it."""
    looked: list[str] = []
    for what, path in library_candidates():
        if path is None:
            looked.append(f"{what}: none")
            continue
        if not path.is_file() and what != "the system's libraries (find_library)":
            looked.append(f"{what}: {path} (missing)")
            continue
        if path.parent == BUNDLED_LIB_DIR and (BUNDLED_LIB_DIR / "bspkit").is_dir():
            # the MPI plugin of this libbsp, which libbsp opens when a run asks for mpi
            os.environ.setdefault("BSPKIT_PLUGIN_DIR", str(BUNDLED_LIB_DIR / "bspkit"))
        try:
            return ctypes.CDLL(str(path)), ctypes.PyDLL(str(path)), path
        except OSError as err:
            looked.append(f"{what}: {path} ({err})")
    raise ImportError(
        "bspkit.bsp cannot find libbsp, bspkit's BSPlib library. Looked in:\n  "
        + "\n  ".join(looked)
        + "\nBuild it (scripts/build.sh build), install bspkit with `pip install .` at the "
        "repository's top, or name the file with BSPKIT_LIBBSP=/path/to/libbsp.so."
    )


# A Python program's processes must be processes (procs or mpi): libbsp reads the back end at
# its first call, so the default is set before any.
os.environ.setdefault("BSPKIT_BACKEND", "procs")

_lib, _fast, LIBRARY_PATH = load_library()

c_int, c_void_p, c_double, byref = ctypes.c_int, ctypes.c_void_p, ctypes.c_double, ctypes.byref

_lib.bspk_binding_error.restype = ctypes.c_char_p
_lib.bspk_binding_error.argtypes = []
_lib.bspk_binding_fail.argtypes = [ctypes.c_char_p]
_lib.bspk_backend.restype = ctypes.c_char_p
_lib.bspk_superstep.restype = ctypes.c_long
_lib.bspk_broadcast.argtypes = [c_int, c_void_p, c_void_p, c_int]
_lib.bspk_reduce.argtypes = [c_void_p, c_void_p, c_void_p, c_int, c_int]
_lib.bsp_init.argtypes = [c_void_p, c_int, c_void_p]
_fast.bspk_try_push_reg.argtypes = [c_void_p, c_int]
_fast.bspk_try_pop_reg.argtypes = [c_void_p]
_fast.bspk_try_profile_phase.argtypes = [ctypes.c_char_p]
# The transfers have no argtypes: converting by argtypes costs more than the call
# (bench/python_call_overhead.py); their arguments are ints, checked to fit a C int, and
# pointers as ctypes objects.
_try_put, _try_hpput = _fast.bspk_try_put, _fast.bspk_try_hpput
_try_get, _try_hpget = _fast.bspk_try_get, _fast.bspk_try_hpget
_try_send, _try_move = _fast.bspk_try_send, _fast.bspk_try_move
_try_get_tag, _try_qsize = _fast.bspk_try_get_tag, _fast.bspk_try_qsize
_try_pid, _try_time = _fast.bspk_try_pid, _fast.bspk_try_time

# Points at a writable C-contiguous buffer's first byte, without a copy: ctypes refuses (TypeError)
# a read-only or non-contiguous one, for which the slow paths below say why.
_at_writable = (ctypes.c_char * 0).from_buffer

_OPS = {
    ("sum", "float64"): "bspk_op_sum_double",
    ("max", "float64"): "bspk_op_max_double",
    ("min", "float64"): "bspk_op_min_double",
    ("sum", "int64"): "bspk_op_sum_long",
    ("max", "int64"): "bspk_op_max_long",
    ("sum", "int32"): "bspk_op_sum_int",
    ("max", "int32"): "bspk_op_max_int",
}


def _refused() -> BspError:
    """The error of the bspk_try_* call that just returned -1."""
    return BspError(_lib.bspk_binding_error().decode(errors="replace"))


def _error(call: str, message: str) -> BspError:
    """An error that only Python can see, in the library's form."""
    where = f" on process {_state.pid}" if _state.pid is not None else ""
    return BspError(f"bspkit: error in {call}{where}: {message}")


# ---------------------------------------------------------------------- the section's state


class _State:
    def __init__(self) -> None:
        self.pid: int | None = None  # this process' id inside the section, None outside
        self.sections_ended = 0
        self.init_called = False
        # address -> (object, its ndarray view) of each registration there, newest last: kept
        # alive while registered (the view keeps a bytearray from being resized)
        self.registered: dict[int, list[tuple[Any, np.ndarray]]] = {}
        # id(object) -> (pointer, itemsize) of a registered object: put's and get's fast path
        self.by_id: dict[int, tuple[ctypes.c_void_p, int]] = {}
        self.popped: list[tuple[Any, np.ndarray]] = []  # popped this superstep: the pop takes effect at the sync
        # what the library reads or writes at the next sync (hpput's sources, gets' destinations):
        # kept alive until then, or the sync would touch freed memory
        self.in_flight: list[Any] = []
        self.send_tagsize = 0  # the tag size of messages sent now
        self.pending_tagsize: int | None = None  # asked for, from the next sync on
        self.queue_tagsize = 0  # the tag size of the messages in the queue
        self.saved_excepthook: Callable[..., Any] | None = None


_state = _State()


def _after_sync() -> None:
    """What a sync changes on the Python side: pops take effect, tag sizes move on."""
    _state.popped.clear()
    _state.in_flight.clear()
    _state.queue_tagsize = _state.send_tagsize
    if _state.pending_tagsize is not None:
        _state.send_tagsize = _state.pending_tagsize
        _state.pending_tagsize = None


# ------------------------------------------------------------------------- buffers as pointers


def _as_array(obj: Any, call: str, what: str) -> np.ndarray:
    """obj as an ndarray over the same memory (no copy), or BspError saying why not."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        return np.asarray(memoryview(obj))
    except TypeError:
        raise _error(
            call, f"{what} must be a NumPy array or a buffer (bytes, bytearray, memoryview), not {type(obj).__name__}"
        ) from None


def _contiguous(array: np.ndarray, call: str, what: str) -> None:
    if not array.flags.c_contiguous:
        raise _error(
            call,
            f"{what} is not contiguous (a strided view such as a[::2], or a transpose): "
            "pass np.ascontiguousarray(...) of it",
        )


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _source(obj: Any, call: str, what: str = "src") -> tuple[Any, int]:
    """(pointer argument, nbytes) of data the library reads (read-only is fine)."""
    if isinstance(obj, bytes):
        return obj, len(obj)  # ctypes passes bytes as a pointer to their data
    array = _as_array(obj, call, what)
    _contiguous(array, call, what)
    return c_void_p(_address(array)), array.nbytes


def _destination(obj: Any, call: str, what: str = "dst") -> tuple[ctypes.c_void_p, int, int]:
    """(pointer, nbytes, itemsize) of a buffer the library writes."""
    array = _as_array(obj, call, what)
    _contiguous(array, call, what)
    if not array.flags.writeable:
        raise _error(call, f"{what} is read-only")
    return c_void_p(_address(array)), array.nbytes, array.itemsize


def _area(obj: Any, call: str, what: str) -> tuple[ctypes.c_void_p, int]:
    """(pointer, itemsize) of a registered array named in a put or get: its address, which
    the library looks up (and refuses when it is not registered)."""
    try:
        return _state.by_id[id(obj)]
    except KeyError:
        array = _as_array(obj, call, what)
        return c_void_p(_address(array)), array.itemsize


def _fits(call: str, pid: int, byte_offset: int, nbytes: int) -> None:
    """pid, offset and size as C ints: ctypes would cut larger values silently."""
    if not -INT_MAX <= pid <= INT_MAX:
        raise _error(call, f"pid {pid} is out of range")
    if not -INT_MAX <= byte_offset <= INT_MAX:
        raise _error(call, f"the offset is {byte_offset} bytes: BSPlib's offsets are C ints (at most {INT_MAX} bytes)")
    if nbytes > INT_MAX:
        raise _error(call, f"{nbytes} bytes in one call: BSPlib's sizes are C ints (at most {INT_MAX} bytes)")


# ------------------------------------------------------------------------------ the section


def backend() -> str:
    """The back end this program runs on: procs, mpi, mpi-rma, mpi-naive or threads."""
    return _lib.bspk_backend().decode()


def nprocs() -> int:
    """The number of processes: in the section, how many run; before it, how many
    begin() starts (bsprun -n, BSPKIT_NPROCS, else the cores this program may use)."""
    return int(_lib.bsp_nprocs())


def _flush() -> None:
    """Python's own buffers: what they hold would be written by every copy a fork makes,
    and lost where a process _exits at end()."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()


@ctypes.CFUNCTYPE(None)
def _never_called() -> None:  # pragma: no cover - bsp_init's function; procs does not call it
    """The SPMD function bsp_init is given on procs, which forks at bsp_begin instead: naming
    one lets a program (a notebook's run()) start a second section."""


def begin(p: int | None = None) -> None:
    """Starts the SPMD section on p processes (default: nprocs()). On procs the calling
    process forks p - 1 copies of itself here, each going on from this call; on mpi every
    rank runs the program from its start and meets the others here."""
    if _state.pid is not None:
        raise _error("bsp_begin", "called inside a running SPMD section (bspkit.bsp has no nested sections)")
    count = nprocs() if p is None else int(p)
    name = backend()
    if name == "threads" and count > 1:
        raise _error(
            "bsp_begin",
            "the threads back end runs every BSP process as a thread of one program, which a "
            "Python program cannot be: use procs (bsprun -b procs) or mpi",
        )
    if name.startswith("mpi") and _state.sections_ended > 0:
        raise _error(
            "bsp_begin", f"a second SPMD section: on {name} a Python program has one (begin ... end), run on every rank"
        )
    if name == "procs" and not _state.init_called:
        _lib.bsp_init(ctypes.cast(_never_called, c_void_p), 0, None)
        _state.init_called = True
    _flush()
    if _lib.bspk_try_begin(count) != 0:
        raise _refused()
    _state.registered.clear()
    _state.by_id.clear()
    _state.popped.clear()
    _state.send_tagsize = _state.queue_tagsize = 0
    _state.pending_tagsize = None
    pid_out = c_int()
    _try_pid(byref(pid_out))
    _state.pid = pid_out.value
    if _state.saved_excepthook is None:
        _state.saved_excepthook = sys.excepthook
        sys.excepthook = _excepthook


def end() -> None:
    """Ends the SPMD section. Only process 0 returns; the others end here (their atexit
    handlers do not run on procs)."""
    _flush()
    _lib.bsp_end()
    # process 0 only from here
    _state.pid = None
    _state.sections_ended += 1
    _state.registered.clear()
    _state.by_id.clear()
    _state.popped.clear()
    _state.in_flight.clear()
    if _state.saved_excepthook is not None:
        sys.excepthook = _state.saved_excepthook
        _state.saved_excepthook = None


def pid() -> int:
    """This process' id, 0 <= pid < nprocs()."""
    if _state.pid is not None:
        return _state.pid
    out = c_int()
    if _try_pid(byref(out)) != 0:
        raise _refused()
    return out.value


def time() -> float:
    """Seconds since this process entered the section (a monotonic clock)."""
    out = c_double()
    if _try_time(byref(out)) != 0:
        raise _refused()
    return out.value


def superstep() -> int:
    """The number of supersteps this process has completed in the section."""
    if _state.pid is None:
        pid()  # raises the library's error for a call outside the section
    return int(_lib.bspk_superstep())


def sync() -> None:
    """Ends the superstep: puts, gets and messages are delivered, registrations take effect."""
    _lib.bsp_sync()
    _after_sync()


def abort(message: str) -> None:
    """Ends every process of the run with status 1, printing "bspkit: bsp_abort on process
    P: message" once."""
    _flush()
    _lib.bsp_abort(b"%s", str(message).encode(errors="replace"))


# ---------------------------------------------------------------------------- registration


def push_reg(array: Buffer) -> None:
    """Registers array (writable and C-contiguous) for remote access from the next sync on.
    bspkit.bsp keeps a reference to it until it is popped."""
    call = "bsp_push_reg"
    target = _as_array(array, call, "the array")
    _contiguous(target, call, "the array")
    if not target.flags.writeable:
        raise _error(call, "the array is read-only: other processes' puts would write into it")
    _fits(call, 0, 0, target.nbytes)
    address = _address(target)
    if _fast.bspk_try_push_reg(address, target.nbytes) != 0:
        raise _refused()
    _state.registered.setdefault(address, []).append((array, target))
    _state.by_id[id(array)] = (c_void_p(address), target.itemsize)


def pop_reg(array: Buffer) -> None:
    """Removes the newest registration of array's address from the next sync on."""
    address = _address(_as_array(array, "bsp_pop_reg", "the array"))
    if _fast.bspk_try_pop_reg(address) != 0:
        raise _refused()
    kept = _state.registered.get(address)
    if kept:
        gone = kept.pop()
        _state.popped.append(gone)
        if not any(obj is gone[0] for obj, _ in kept):
            _state.by_id.pop(id(gone[0]), None)
        if not kept:
            del _state.registered[address]


# ------------------------------------------------------------------------------- DRMA


def _make_put(try_call: Callable[..., int], call: str) -> Callable[[int, Buffer, Buffer, int], None]:
    by_id, at_writable, limit = _state.by_id, _at_writable, INT_MAX  # looked up once: this is the hot path
    keep = _state.in_flight.append if call == "bsp_hpput" else None  # hpput reads src until the sync

    def put(pid: int, src: Buffer, dst: Buffer, offset: int = 0) -> None:
        try:
            dst_at, itemsize = by_id[id(dst)]
            src_at, nbytes = at_writable(src), src.nbytes  # type: ignore[union-attr]
        except (KeyError, TypeError, AttributeError):
            src_at, nbytes = _source(src, call)
            dst_at, itemsize = _area(dst, call, "dst")
        byte_offset = offset * itemsize
        if nbytes > limit or not -limit <= byte_offset <= limit or not -limit <= pid <= limit:
            _fits(call, pid, byte_offset, nbytes)
        try:
            status = try_call(pid, src_at, dst_at, byte_offset, nbytes)
        except ctypes.ArgumentError:  # a NumPy integer for pid or offset
            status = try_call(index(pid), src_at, dst_at, index(byte_offset), nbytes)
        if status != 0:
            raise _refused()
        if keep is not None:
            keep(src)

    put.__name__ = put.__qualname__ = call.removeprefix("bsp_")
    put.__doc__ = (
        f"Copies all of src into process pid's registered dst, from element offset of dst on\n"
        f"(offset * dst.itemsize bytes), at the next sync ({call}"
        + (
            ": src may be read until the sync; leave it unchanged until then)."
            if call == "bsp_hpput"
            else ": src is copied now)."
        )
    )
    return put


def _make_get(try_call: Callable[..., int], call: str) -> Callable[[int, Buffer, int, Buffer], None]:
    by_id, at_writable, limit = _state.by_id, _at_writable, INT_MAX  # looked up once: this is the hot path
    keep = _state.in_flight.append  # dst is written at the sync

    def get(pid: int, src: Buffer, offset: int, dst: Buffer) -> None:
        try:
            src_at, itemsize = by_id[id(src)]
            dst_at, nbytes = at_writable(dst), dst.nbytes  # type: ignore[union-attr]
        except (KeyError, TypeError, AttributeError):
            dst_at, nbytes, _ = _destination(dst, call)
            src_at, itemsize = _area(src, call, "src")
        byte_offset = offset * itemsize
        if nbytes > limit or not -limit <= byte_offset <= limit or not -limit <= pid <= limit:
            _fits(call, pid, byte_offset, nbytes)
        try:
            status = try_call(pid, src_at, byte_offset, dst_at, nbytes)
        except ctypes.ArgumentError:  # a NumPy integer for pid or offset
            status = try_call(index(pid), src_at, index(byte_offset), dst_at, nbytes)
        if status != 0:
            raise _refused()
        keep(dst)

    get.__name__ = get.__qualname__ = call.removeprefix("bsp_")
    get.__doc__ = (
        f"Fills dst (dst.nbytes bytes) from process pid's registered src, from element offset of\n"
        f"src on, at the next sync ({call}"
        + ("; src must stay unchanged until then)." if call == "bsp_hpget" else ").")
    )
    return get


put = _make_put(_try_put, "bsp_put")
hpput = _make_put(_try_hpput, "bsp_hpput")
get = _make_get(_try_get, "bsp_get")
hpget = _make_get(_try_hpget, "bsp_hpget")


# ---------------------------------------------------------------------------- BSMP


def set_tagsize(nbytes: int) -> int:
    """Sets the tag size of the messages sent after the next sync; returns the size it replaces."""
    _fits("bsp_set_tagsize", 0, 0, nbytes)
    size = c_int(index(nbytes))
    if _fast.bspk_try_set_tagsize(byref(size)) != 0:
        raise _refused()
    _state.pending_tagsize = index(nbytes)
    return size.value


def send(pid: int, tag: Buffer | None, payload: Buffer) -> None:
    """Sends payload (copied now) with tag (tagsize bytes; None when the tag size is 0) into
    process pid's queue at the next sync."""
    call = "bsp_send"
    if tag is None:
        if _state.send_tagsize != 0:
            raise _error(call, f"no tag, but the tag size is {_state.send_tagsize} bytes")
        tag_at: Any = None
    else:
        tag_at, tag_nbytes = _source(tag, call, "the tag")
        if tag_nbytes != _state.send_tagsize:
            raise _error(call, f"the tag has {tag_nbytes} bytes, but the tag size is {_state.send_tagsize}")
    payload_at, nbytes = _source(payload, call, "the payload")
    _fits(call, pid, 0, nbytes)
    if _try_send(index(pid), tag_at, payload_at, nbytes) != 0:
        raise _refused()


def qsize() -> tuple[int, int]:
    """(messages in the queue, their payloads' bytes in all)."""
    count, nbytes = c_int(), c_int()
    if _try_qsize(byref(count), byref(nbytes)) != 0:
        raise _refused()
    return count.value, nbytes.value


def get_tag() -> tuple[int, bytes | None]:
    """(the first message's payload size in bytes, its tag), or (-1, None) when the queue is empty."""
    status = c_int()
    tag = ctypes.create_string_buffer(max(_state.queue_tagsize, 1))
    if _try_get_tag(byref(status), tag) != 0:
        raise _refused()
    if status.value == -1:
        return -1, None
    return status.value, tag.raw[: _state.queue_tagsize]


def move(dtype: Any = np.uint8) -> np.ndarray:
    """The first message's payload as a new array of dtype, taking it off the queue; an empty
    queue is a BspError."""
    call = "bsp_move"
    status, _ = get_tag()
    if status == -1:
        if _try_move(None, 0) != 0:  # the library's own error for an empty queue
            raise _refused()
        raise _error(call, "the queue is empty")  # pragma: no cover - the library refuses first
    payload = np.empty(0, dtype=dtype)
    if status % payload.itemsize:
        raise _error(call, f"the payload has {status} bytes, not a whole number of {np.dtype(dtype).name} elements")
    payload = np.empty(status // payload.itemsize, dtype=dtype)
    if _try_move(c_void_p(_address(payload)), status) != 0:
        raise _refused()
    return payload


def messages(dtype: Any = np.uint8) -> Iterator[tuple[bytes | None, np.ndarray]]:
    """(tag, payload array of dtype) of every message in the queue, taking them off it."""
    while True:
        status, tag = get_tag()
        if status == -1:
            return
        yield tag, move(dtype)


# ---------------------------------------------------------------- collectives, profile phases


def broadcast(root: int, array: Buffer) -> None:
    """Copies array from process root into array on every process, in place (collective; ends
    with a sync). Every process passes an array of the same size in bytes."""
    at, nbytes, _ = _destination(array, "bspk_broadcast", "the array")
    _fits("bspk_broadcast", root, 0, nbytes)
    _lib.bspk_broadcast(index(root), at, at, nbytes)
    _after_sync()


def reduce(op: str, values: Any) -> Any:
    """The element-wise op ("sum", "max" or "min") of values over all processes, in process
    order so every process gets the same bits (collective; ends with a sync). values: an
    array or a scalar of float64, int64 or int32 ("min" of float64 only); returns a new array
    shaped like values, or a scalar for a scalar."""
    call = "bspk_reduce"
    source = np.asarray(values, order="C")
    name = _OPS.get((op, source.dtype.name))
    if name is None:
        have = ", ".join(f"{o} of {t}" for o, t in _OPS)
        raise _error(call, f"no operation {op!r} for {source.dtype.name}: bspkit.h has {have}")
    result = np.empty_like(source)
    _fits(call, 0, 0, source.nbytes)
    operation = ctypes.cast(getattr(_lib, name), c_void_p)
    _lib.bspk_reduce(operation, _address(source), _address(result), source.size, source.itemsize)
    _after_sync()
    return result if np.ndim(values) else result.item()


def profile_phase(name: str) -> None:
    """Marks the supersteps that end from now on as phase name in the profile (bsprun --profile)."""
    if _fast.bspk_try_profile_phase(str(name).encode()) != 0:
        raise _refused()


@contextlib.contextmanager
def packing() -> Iterator[None]:
    """The time inside `with bsp.packing():` is packing in the profile (copying data into or
    out of buffers for communication), not computation."""
    if _fast.bspk_try_profile_packing(1) != 0:
        raise _refused()
    try:
        yield
    finally:
        if _fast.bspk_try_profile_packing(0) != 0:
            raise _refused()


# ------------------------------------------------------------------- failing as a C program


def failure_line(exc: BaseException, tb: TracebackType | None) -> str:
    """The run's one error line for an exception nobody caught inside the section."""
    if isinstance(exc, BspError):
        return " ".join(str(exc).split())
    where = ""
    frames = traceback.extract_tb(tb) if tb is not None else []
    if frames:
        where = f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})"
    text = " ".join(str(exc).split())
    kind = type(exc).__name__
    process = _state.pid if _state.pid is not None else "?"
    return (
        f"bspkit: error on process {process}: {kind}: {text}{where}"
        if text
        else f"bspkit: error on process {process}: {kind}{where}"
    )


def fail(exc: BaseException, tb: TracebackType | None = None) -> None:
    """Ends every process of the run with status 1 and exc as its one error line."""
    _flush()
    _lib.bspk_binding_fail(failure_line(exc, tb if tb is not None else exc.__traceback__).encode(errors="replace"))


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if _state.pid is None:  # not in a section (any more): Python's own report
        (_state.saved_excepthook or sys.__excepthook__)(kind, exc, tb)
        return
    fail(exc, tb)


# ------------------------------------------------------------------------------ notebooks


def run(func: Callable[..., Any], p: int | None = None, *args: Any) -> Any:
    """Runs func(*args) on p processes (default: nprocs()) as one SPMD section and returns
    process 0's result. On procs (the default) the calling process forks p - 1 copies of
    itself, a notebook's kernel included: each copy has everything the notebook has made,
    and ends at the section's end. An exception in func on any process ends the whole run
    (the kernel too) with one line."""
    begin(p)
    try:
        result = func(*args)
    except BaseException as exc:  # noqa: BLE001 - no process may leave the section by an exception
        fail(exc)
    end()
    return result
