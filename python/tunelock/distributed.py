"""Moving the engine's verify messages between ranks. The engine builds and
folds them and picks the transport (TUNELOCK_VERIFY_TRANSPORT); Python only
moves bytes through the process group when torch.distributed is initialised:
over UCX (the default where built) the group all-gathers each rank's UCX
address once, at its first check, and later checks never touch the group;
over the group itself, fixed-size tensors (one all-reduce of six integers
when nothing is new or every rank logged the same; a few all-reduces of
O(new keys) integers otherwise; an all-gather of conflicting keys' texts
only when there are some). Without a process group, the engine's UCX
collective from the environment (RANK/WORLD_SIZE and the rendezvous
variables), a group of one when WORLD_SIZE is 1. Never all_gather_object:
no pickling, and nothing a rank receives grows with the number of ranks.

A check's collectives wait until its deadline (TUNELOCK_VERIFY_TIMEOUT
after it began, less the time the roll call keeps); when one fails or times
out, the survivors find who left through the group's store
(_roll_call.py) and raise naming that rank, not the transport's own error."""
import ctypes
import time
from datetime import timedelta

from . import _roll_call
from ._native import ALL_REDUCE_FN, GATHER_FN, call_json, check, encode, lib

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
        self.deadline = None  # monotonic seconds: when this check's collectives give up

    def _complete(self, work):
        """Waits for an asynchronous collective until the check's deadline:
        a peer that is gone must not hold this rank for the process
        group's own timeout (30 minutes by default)."""
        remaining = self.deadline - time.monotonic() if self.deadline is not None else None
        if remaining is None:
            work.wait()
            return
        if remaining <= 0 or not work.wait(timeout=timedelta(seconds=remaining)):
            raise TimeoutError("the collective did not complete by the check's deadline")

    def all_reduce(self, _context, values, count, op):
        try:
            torch = self.torch
            host = torch.frombuffer((ctypes.c_int64 * count).from_address(
                ctypes.addressof(values.contents)), dtype=torch.int64) if count else None
            if host is None:
                return 0
            tensor = host.to(self.device) if self.device.type != "cpu" else host
            reduce_op = self.dist.ReduceOp.SUM if op == _SUM else self.dist.ReduceOp.MIN
            self._complete(self.dist.all_reduce(tensor, op=reduce_op, group=self.group,
                                                async_op=True))
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
            self._complete(dist.all_gather(sizes, size, group=self.group, async_op=True))
            lengths = [int(s.item()) for s in sizes]
            longest = max(lengths)
            mine = torch.zeros(longest, dtype=torch.uint8)
            if length:
                mine[:length] = torch.frombuffer(bytearray(ctypes.string_at(payload, length)),
                                                 dtype=torch.uint8)
            mine = mine.to(self.device)
            padded = [torch.zeros(longest, dtype=torch.uint8, device=self.device)
                      for _ in range(self.size)]
            self._complete(dist.all_gather(padded, mine, group=self.group, async_op=True))
            for data, n in zip(padded, lengths):
                check(lib.tunelock_gather_add(sink, bytes(data[:n].cpu().numpy())
                                              if n else b"", n))
            return 0
        except Exception as error:  # reported by the engine as a failed all-gather
            self.failure.append(error)
            return 1


class _GroupCheck:
    """What a group's checks pass to the engine, made once per group: its
    rank, size, world ranks, id and callbacks (a check runs every step, and
    over UCX the engine needs none of them after the first)."""

    def __init__(self, dist, group):
        self.rank, self.size = dist.get_rank(group), dist.get_world_size(group)
        self.world = (ctypes.c_int * self.size)(
            *[dist.get_global_rank(group, r) if group is not None else r
              for r in range(self.size)])
        self.group_id = encode("torch:" + ("world" if group is None
                                           else ",".join(map(str, self.world))))
        self.transport = _TensorTransport(dist, group)
        self.gather = GATHER_FN(self.transport.gather)
        self.all_reduce = ALL_REDUCE_FN(self.transport.all_reduce)
        self.checks = 0  # every member counts the same checks: the roll call's name
        self.timeout_s = float(call_json("tunelock_installed_policy")["verify_timeout_s"])

    def begin(self):
        """A new check: its number and its collectives' deadline."""
        self.checks += 1
        self.started = time.monotonic()
        self.transport.failure.clear()
        self.transport.deadline = self.started + self.timeout_s - _roll_call.kept_for(
            self.timeout_s)

    def lost(self, dist, failure):
        """The error a survivor raises: who left, found by a roll call."""
        return _roll_call.who_left(
            _roll_call.default_store(dist), f"tunelock/left/{self.group_id.decode()}/{self.checks}",
            list(self.world), self.world[self.rank], failure,
            until=self.started + self.timeout_s)

    def matches(self, dist, group):
        return (self.rank, self.size) == (dist.get_rank(group), dist.get_world_size(group))


_checks = {}
last_over_ucx = None  # whether the last check in a process group went over UCX


def run_verify(iteration, group):
    global last_over_ucx
    if iteration >= 0:  # the cadence first: no group or transport is looked at when no check is due
        due = ctypes.c_int(0)
        check(lib.tunelock_verify_due(iteration, ctypes.byref(due)))
        if not due.value:
            return -1
    dist = _torch_group(group)
    verdict = ctypes.c_int(-1)
    if dist is None:
        if group is not None:
            raise ValueError("a group was given but torch.distributed is not initialised")
        check(lib.tunelock_verify_ucx(iteration, ctypes.byref(verdict)))
        return verdict.value
    prepared = _checks.get(group)
    if prepared is None or not prepared.matches(dist, group):
        prepared = _checks[group] = _GroupCheck(dist, group)
    prepared.begin()
    over_ucx = ctypes.c_int(0)
    status = lib.tunelock_verify_group(iteration, prepared.rank, prepared.size,
                                       prepared.group_id, prepared.world, prepared.gather,
                                       prepared.all_reduce, None, ctypes.byref(verdict),
                                       ctypes.byref(over_ucx))
    last_over_ucx = bool(over_ucx.value)
    if status != 0 and prepared.transport.failure:
        raise prepared.lost(dist, prepared.transport.failure[0])
    check(status)
    return verdict.value
