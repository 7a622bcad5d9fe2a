"""Pure pieces: the static kernel policy, the normalized code hash, the trace wire format."""
import json

import pytest
from accelopt_graph.tools.backend import normalized_code_hash
from accelopt_graph.tools.kernel_policy import check_kernel_source
from accelopt_graph.tools.nkisim.trace import (
    Access,
    Buffer,
    Engine,
    LoopFrame,
    LoopKind,
    TraceEvent,
)
from accelopt_graph.tools.trace_wire import (
    TraceFormatError,
    check_wire_format,
    decode_trace,
    encode_trace,
)

NKI_KERNEL = """
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from neuronxcc.nki import isa as nisa
import math

@nki.jit
def kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.exp(t) * np.float32(math.pi))
    return out
"""


def test_plain_nki_kernel_passes_the_policy():
    assert check_kernel_source(NKI_KERNEL) is None


@pytest.mark.parametrize("snippet,needle", [
    ("import os", "'os'"),
    ("import subprocess as sp", "'subprocess'"),
    ("from accelopt_graph.tools.nkisim import perf_model", "'accelopt_graph.tools.nkisim'"),
    ("from . import x", "'.'"),
    ("x = open('/etc/passwd')", "'open'"),
    ("x = __import__('os')", "'__import__'"),
    ("x = (1).__class__.__subclasses__()", "dunder attribute"),
    ("import numpy as np\nx = np.load('ref.npy')", "np.load"),
    ("from numpy import fromfile", "numpy.fromfile"),
    ("x = getattr(int, 'real')", "'getattr'"),
    ("import operator", "'operator'"),
    ("import functools\nx = functools.partial(print, '__class__')", "dunder names inside strings"),
    ("import typing\nx = typing.get_type_hints(len)", "'get_type_hints'"),
    ("import neuronxcc.nki.language as nl\nnl.current().trace.clear()", "'current'"),
    ("import neuronxcc.nki.language as nl\nf = nl._b.print", "private attribute '_b'"),
    ("import neuronxcc.nki.language as nl\nx = nl.np.load('r.npy')", "'np'"),
    ("import numpy.lib.format as f", "'numpy.lib.format'"),
    ("from numpy.lib import format", "'numpy.lib'"),
])
def test_policy_refuses_escape_hatches_with_the_line(snippet, needle):
    v = check_kernel_source("a = 1\n" + snippet + "\n")
    assert v is not None and needle in v.reason and v.line >= 2
    assert "may import only" in v.message()


def test_nl_load_is_not_confused_with_numpy_load():
    assert check_kernel_source("import neuronxcc.nki.language as nl\nx = nl.load\n") is None


def test_hash_ignores_comments_docstrings_and_layout_but_not_code():
    a = 'def k(x):\n    """Doc."""\n    return x + 1  # note\n'
    b = "# header\n\ndef k(x):\n    return x+1\n"
    assert normalized_code_hash(a) == normalized_code_hash(b)
    assert normalized_code_hash(a) != normalized_code_hash("def k(x):\n    return x + 2\n")
    bad1, bad2 = "def k(:\n  pass # one\n", "def k(:\n  pass   # two\n"
    assert normalized_code_hash(bad1) == normalized_code_hash(bad2)
    assert normalized_code_hash(bad1) != normalized_code_hash(a)


def _event():
    acc = Access(3, Buffer.HBM, "float32", 512, 128, 1, ((0, 128), (0, 1)), 4, "x", 16)
    return TraceEvent("load", Engine.DMA, (acc,), (acc,), "float32", 128, 1,
                      (LoopFrame(0, LoopKind.AFFINE, 1, 4),), 7, "kernel.py", {"k": [1, 2]})


def test_trace_round_trips_through_json():
    check_wire_format()
    rows = json.loads(json.dumps(encode_trace([_event()])))
    assert decode_trace(rows, max_events=5) == [_event()]


@pytest.mark.parametrize("mutate", [
    lambda r: r.__setitem__(1, "warp_drive"),
    lambda r: r.__setitem__(5, "128"),
    lambda r: r[2][0].__setitem__(3, 1.5),
    lambda r: r.pop(),
])
def test_malformed_trace_rows_are_refused(mutate):
    rows = json.loads(json.dumps(encode_trace([_event()])))
    mutate(rows[0])
    with pytest.raises(TraceFormatError):
        decode_trace(rows, max_events=5)


def test_trace_event_cap():
    rows = encode_trace([_event()] * 3)
    with pytest.raises(TraceFormatError, match="cap"):
        decode_trace(rows, max_events=2)


def _acc(tid, buffer, nbytes=512):
    return Access(tid, buffer, "float32", nbytes, 128, 1)


def test_trace_consistency_on_hand_made_traces():
    import numpy as np
    from accelopt_graph.tools.checks import trace_inconsistency

    out = [np.zeros(128, np.float32)]  # 512 bytes
    load = TraceEvent("load", Engine.DMA, (_acc(1, Buffer.HBM),), (_acc(2, Buffer.SBUF),), "float32", 128, 1)
    exp = TraceEvent("activation", Engine.SCALAR, (_acc(2, Buffer.SBUF),), (_acc(3, Buffer.SBUF),), "float32", 128, 1)
    store = TraceEvent("store", Engine.DMA, (_acc(3, Buffer.SBUF),), (_acc(4, Buffer.HBM),), "float32", 128, 1)
    assert trace_inconsistency([load, exp, store], out) is None
    assert "before any instruction wrote it" in trace_inconsistency([load, store], out)
    assert "stores 0 bytes" in trace_inconsistency([load, exp], out)
    psum = TraceEvent("tensor_copy", Engine.VECTOR, (_acc(9, Buffer.PSUM),), (_acc(3, Buffer.SBUF),), "float32", 128, 1)
    assert trace_inconsistency([psum, store], out) is None  # zero-initialised PSUM leaves no event


def test_generated_trace_codec_agrees_with_the_reference_codec_on_a_real_trace():
    from dataclasses import fields

    from accelopt_graph.nkibench import load_task
    from accelopt_graph.tools import trace_wire
    from accelopt_graph.tools.nkisim import load_module
    from accelopt_graph.tools.nkisim.interpreter import run_kernel

    task = load_task("rmsnorm_matmul", reduced=True)
    _, trace = run_kernel(load_module(task.baseline_path).kernel, list(task.kernel_inputs(0)))
    events = list(trace)
    reference_rows = [[trace_wire._plain(getattr(e, f.name)) for f in fields(TraceEvent)] for e in events]
    rows = encode_trace(events)
    assert json.dumps(rows) == json.dumps(reference_rows)
    wire = json.loads(json.dumps(rows))
    assert decode_trace(wire, max_events=10**6) == [trace_wire._build(TraceEvent, r) for r in wire]


@pytest.mark.parametrize("bad", [True, 1.0])
def test_loop_frames_that_hash_like_valid_ones_are_still_refused(bad):
    rows = json.loads(json.dumps(encode_trace([_event(), _event()])))
    rows[1][7][0][2] = bad  # iteration 1 -> True / 1.0, equal to the cached frame's 1 as a dict key
    with pytest.raises(TraceFormatError):
        decode_trace(rows, max_events=5)
