"""Moving the engine's verify messages between ranks. The engine builds and
folds them; Python only moves fixed-size tensors: over torch.distributed when
a process group is initialised (an all-reduce of one integer when nothing is
new; a few all-reduces of O(new keys) integers otherwise; an all-gather of
conflicting keys' texts only when there are some), else over the engine's
UCX collective (RANK/WORLD_SIZE and the rendezvous variables), which is a
group of one when WORLD_SIZE is 1. Never all_gather_object: no pickling, and
nothing a rank receives grows with the number of ranks."""
import ctypes

from ._native import ALL_REDUCE_FN, GATHER_FN, check, encode, lib

_SUM, _MIN = 0, 1


def _torch_group(group):
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not (dist.is_available() and dist.is_initialized()):
        return None
    return dist


def _device(dist, group):
    """CPU for gloo; the current CUDA device for NCCL, which moves only
    device tensors."""
    import torch
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


class _TensorTransport:
    """The all-reduce and all-gather the engine asks for, as torch tensors."""

    def __init__(self, dist, group):
        import torch
        self.torch, self.dist, self.group = torch, dist, group
        self.device = _device(dist, group)
        self.size = dist.get_world_size(group)
        self.failure = []

    def all_reduce(self, _context, values, count, op):
        try:
            torch = self.torch
            host = torch.frombuffer((ctypes.c_int64 * count).from_address(
                ctypes.addressof(values.contents)), dtype=torch.int64) if count else None
            if host is None:
                return 0
            tensor = host.to(self.device) if self.device.type != "cpu" else host
            reduce_op = self.dist.ReduceOp.SUM if op == _SUM else self.dist.ReduceOp.MIN
            self.dist.all_reduce(tensor, op=reduce_op, group=self.group)
            if tensor is not host:
                host.copy_(tensor.cpu())
            return 0
        except Exception as error:  # reported by the engine as a failed all-reduce
            self.failure.append(error)
            return 1

    def gather(self, _context, payload, length, sink):
        """Only conflicting keys' texts: lengths first (one integer per rank),
        then every payload padded to the longest."""
        try:
            torch, dist = self.torch, self.dist
            size = torch.tensor([length], dtype=torch.int64, device=self.device)
            sizes = [torch.zeros(1, dtype=torch.int64, device=self.device)
                     for _ in range(self.size)]
            dist.all_gather(sizes, size, group=self.group)
            lengths = [int(s.item()) for s in sizes]
            longest = max(lengths)
            mine = torch.zeros(longest, dtype=torch.uint8)
            if length:
                mine[:length] = torch.frombuffer(bytearray(ctypes.string_at(payload, length)),
                                                 dtype=torch.uint8)
            mine = mine.to(self.device)
            padded = [torch.zeros(longest, dtype=torch.uint8, device=self.device)
                      for _ in range(self.size)]
            dist.all_gather(padded, mine, group=self.group)
            for data, n in zip(padded, lengths):
                check(lib.tunelock_gather_add(sink, bytes(data[:n].cpu().numpy())
                                              if n else b"", n))
            return 0
        except Exception as error:  # reported by the engine as a failed all-gather
            self.failure.append(error)
            return 1


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
    transport = _TensorTransport(dist, group)
    group_id = "torch:" + ("world" if group is None else ",".join(map(str, world)))
    status = lib.tunelock_verify_reduce(iteration, rank, size, encode(group_id), world,
                                        GATHER_FN(transport.gather),
                                        ALL_REDUCE_FN(transport.all_reduce), None,
                                        ctypes.byref(verdict))
    if status != 0 and transport.failure:
        raise transport.failure[0]
    check(status)
    return verdict.value
