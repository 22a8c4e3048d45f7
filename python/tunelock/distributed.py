"""Moving the engine's verify batches between ranks. The engine encodes this
rank's batch and folds the gathered ones; Python only moves bytes: over
torch.distributed (all_gather_object) when a process group is initialised,
else over the engine's UCX collective (RANK/WORLD_SIZE and the rendezvous
variables), which is a group of one when WORLD_SIZE is 1."""
import ctypes

from ._native import GATHER_FN, check, encode, lib


def _torch_group(group):
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not (dist.is_available() and dist.is_initialized()):
        return None
    return dist


def run_verify(iteration, group):
    dist = _torch_group(group)
    verdict = ctypes.c_int(-1)
    if dist is None:
        if group is not None:
            raise ValueError("a group was given but torch.distributed is not initialised")
        check(lib.tunelock_verify_ucx(iteration, ctypes.byref(verdict)))
        return verdict.value
    rank, size = dist.get_rank(group), dist.get_world_size(group)
    world = (ctypes.c_int * size)(*[dist.get_global_rank(group, r) if group is not None else r
                                    for r in range(size)])
    failure = []

    def gather(_context, payload, length, sink):
        try:
            gathered = [None] * size
            dist.all_gather_object(gathered, ctypes.string_at(payload, length), group=group)
            for data in gathered:
                check(lib.tunelock_gather_add(sink, data, len(data)))
            return 0
        except Exception as error:  # reported by the engine as a failed all-gather
            failure.append(error)
            return 1

    group_id = "torch:" + ("world" if group is None else ",".join(map(str, world)))
    status = lib.tunelock_verify(iteration, rank, size, encode(group_id), world, GATHER_FN(gather),
                                 None, ctypes.byref(verdict))
    if status != 0 and failure:
        raise failure[0]
    check(status)
    return verdict.value
