"""Smaller APIs in one kernel each: loop_reduce, iota/affine_select, tensor_scalar reverse,
tensor_partition_reduce, nl.where, scalar_tensor_tensor, tensor_scalar_reduce."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def max_over_blocks(x):
    """x: [NB, 128, F] -> elementwise max over NB with nl.loop_reduce."""
    NB, P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((P, F), dtype=x.dtype)
    for k in nl.affine_range(NB):
        t = nl.load(x[k])
        acc = nl.loop_reduce(t, op=np.max, loop_indices=[k])
    nl.store(out, value=acc)
    return out


@nki.jit
def causal_mask(x):
    """Keep x[p, f] where f <= p, else -inf (affine_select); also an iota of p*F + f."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:P, 0:F]
    t = nl.load(x)
    y = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=t, on_false_value=-np.inf)
    nl.store(out, value=y)
    nl.store(idx, value=nisa.iota(i_p * F + i_f, dtype=nl.int32))
    return out, idx


@nki.jit
def vector_ops(x, y):
    P, F = x.shape
    o1 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    o2 = nl.ndarray((1, F), dtype=x.dtype, buffer=nl.shared_hbm)
    o3 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    o4 = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    o5 = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    tx = nl.load(x)
    ty = nl.load(y)
    # (2 - x) * 3 with reverse0: operand0 op0 data
    nl.store(o1, value=nisa.tensor_scalar(tx, np.subtract, 2.0, reverse0=True, op1=np.multiply,
                                          operand1=3.0))
    nl.store(o2, value=nisa.tensor_partition_reduce(np.add, tx))
    nl.store(o3, value=nl.where(nl.greater(tx, ty), tx, ty))
    nl.store(o4, value=nisa.scalar_tensor_tensor(data=tx, op0=np.multiply, operand0=0.5,
                                                 op1=np.add, operand1=ty))
    red = nl.ndarray((P, 1), dtype=nl.float32)
    nisa.tensor_scalar_reduce(data=tx, op0=np.multiply, operand0=2.0, reduce_op=np.add,
                              reduce_res=red)
    nl.store(o5, value=red)
    return o1, o2, o3, o4, o5
