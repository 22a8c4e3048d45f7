"""Who left a check. When a collective of a tunelock check fails or times
out, the transport's own words ("Connection closed by peer", a timeout)
name no rank, and a rank that waits on a live neighbour may not fail at
all until the deadline. So each survivor answers a roll call in the
process group's store, under the check's name, and waits until the check's
deadline for the others: the ranks that never answer are the ones that
left (killed, crashed, or stopped elsewhere). In a group of two the other
rank is named at once: a failed collective had no one else to fail on."""
import time

from ._native import TunelockError

# What a check's deadline keeps back for the roll call: survivors blocked in
# a collective give up this long before the deadline, so that they answer.
_KEPT_SHARE, _KEPT_MOST_S = 0.2, 10.0
# How much of the transport's error a message quotes.
_QUOTED = 500


def kept_for(timeout_s):
    return min(_KEPT_SHARE * timeout_s, _KEPT_MOST_S)


def default_store(dist):
    """The store the process group was made with (rank 0's TCPStore under
    env://, torchrun's agent's), or None where this torch hides it."""
    try:
        return dist.distributed_c10d._get_default_store()
    except Exception:  # private in every torch version; absent means no roll call
        return None


def _said(failure):
    text = " ".join(str(failure).split()) or type(failure).__name__
    return text if len(text) <= _QUOTED else text[:_QUOTED] + "..."


def _ranks_text(ranks):
    return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(map(str, ranks))


def _timed_out(failure):
    return isinstance(failure, TimeoutError)


def who_left(store, name, world_ranks, me, failure, until, poll_s=0.02):
    """The TunelockError a survivor raises. `world_ranks` are the group's
    members as world ranks, `me` this rank's; `name` is the check's key
    prefix, the same on every member; `until` the check's deadline
    (time.monotonic())."""
    said = _said(failure)
    others = [r for r in world_ranks if r != me]
    # A timeout cannot tell a rank that died from one still busy elsewhere.
    how = "never came to the check or left it" if _timed_out(failure) else "left during the check"
    if len(others) == 1 and not _timed_out(failure):
        return TunelockError(f"verify: {_ranks_text(others)} left during the check "
                             f"(the transport said: {said})")
    if store is None:
        return TunelockError(f"verify: a rank left during the check; this torch does not expose "
                             f"the group's store, so it cannot be named (the transport said: "
                             f"{said})")
    missing, polled = list(others), False
    try:
        # add() is in every torch's store and never blocks: adding 0 reads.
        store.add(f"{name}/{me}", 1)
        while missing:
            missing = [r for r in missing if store.add(f"{name}/{r}", 0) == 0]
            polled = True
            if not missing or time.monotonic() >= until:
                break
            time.sleep(poll_s)
    except Exception as store_error:
        # The store's host ended its own roll call first (ranks start a
        # check at different times): the last answer read stands.
        if not polled:
            return TunelockError(
                f"verify: a rank left during the check, and the group's store no longer answers "
                f"({_said(store_error)}); under env:// it lives in rank 0's process, so rank 0 is "
                f"likely the one that left (the transport said: {said})")
    if not missing:
        return TunelockError(f"verify: the check's collective failed, yet every rank of the group "
                             f"answered the roll call (the transport said: {said})")
    return TunelockError(f"verify: {_ranks_text(missing)} {how} (no answer to the roll call "
                         f"by the check's deadline; the transport said: {said})")
