"""Who left a check, without torch: the roll call over a stand-in store
(what the process group's TCPStore offers: add), the group's
collectives bounded by the check's deadline, and each message. The same
path over real gloo processes is test_killed_ranks.py."""
import threading
import time

import pytest

from tunelock import TunelockError, _roll_call
from tunelock.distributed import _TensorTransport


class Store:
    """A process group's store in one process, shared by threads."""

    def __init__(self):
        self.counters, self.lock = {}, threading.Lock()

    def add(self, key, amount):
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + amount
            return self.counters[key]


class GoneStore:
    def add(self, _key, _amount):
        raise RuntimeError("Connection reset by peer")


CLOSED = RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed "
                      "by peer [127.0.0.1]:41234")


def roll_call(store, members, survivors, failure, seconds=1.0):
    """Every survivor's error, each survivor in its own thread, as ranks are."""
    until = time.monotonic() + seconds
    errors = {}

    def survivor(me):
        errors[me] = _roll_call.who_left(store, "tunelock/left/torch:world/2", members, me,
                                         failure, until, poll_s=0.005)
    threads = [threading.Thread(target=survivor, args=(me,)) for me in survivors]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return errors


def test_the_survivors_name_the_rank_that_never_answers():
    start = time.monotonic()
    errors = roll_call(Store(), [0, 1, 2, 3], [0, 1, 3], CLOSED)
    assert time.monotonic() - start < 5
    for error in errors.values():
        assert isinstance(error, TunelockError)
        assert str(error).startswith("verify: rank 2 left during the check (no answer to the roll "
                                     "call by the check's deadline; the transport said: [../third"
                                     "_party/gloo/gloo/transport/tcp/pair.cc:598] Connection "
                                     "closed by peer"), error


def test_a_subgroup_is_named_by_world_ranks_and_two_lost_ranks_both():
    errors = roll_call(Store(), [1, 3, 5, 7], [3, 7], CLOSED)
    assert set(errors) == {3, 7}
    assert all("verify: ranks 1,5 left during the check" in str(e) for e in errors.values())


def test_in_a_group_of_two_the_other_rank_is_named_at_once():
    start = time.monotonic()
    error = _roll_call.who_left(None, "n", [0, 1], 0, CLOSED, until=time.monotonic() + 60)
    assert time.monotonic() - start < 1
    assert str(error).startswith("verify: rank 1 left during the check (the transport said: ")


def test_a_timeout_does_not_claim_the_silent_rank_died():
    errors = roll_call(Store(), [0, 1, 2], [0, 1],
                       TimeoutError("the collective did not complete by the check's deadline"),
                       seconds=0.3)
    for error in errors.values():
        assert "verify: rank 2 never came to the check or left it (no answer" in str(error)
        assert "did not complete by the check's deadline" in str(error)


def test_a_store_that_is_gone_points_at_rank_zero():
    error = _roll_call.who_left(GoneStore(), "n", [0, 1, 2], 1, CLOSED, time.monotonic() + 5)
    assert "the group's store no longer answers (Connection reset by peer)" in str(error)
    assert "rank 0 is likely the one that left" in str(error)


def test_everyone_answering_says_no_rank_left():
    errors = roll_call(Store(), [0, 1], [0, 1], TimeoutError("slow"))
    assert all("every rank of the group answered the roll call" in str(e)
               for e in errors.values())


def test_without_a_store_the_message_says_why_no_rank_is_named():
    error = _roll_call.who_left(None, "n", [0, 1, 2], 0, CLOSED, time.monotonic())
    assert "does not expose the group's store" in str(error) and "Connection closed" in str(error)


def test_a_long_transport_message_is_quoted_on_one_line_and_cut():
    error = _roll_call.who_left(None, "n", [0, 1], 0, RuntimeError("x\n" * 2000), time.monotonic())
    assert "\n" not in str(error) and str(error).endswith("...)")
    assert len(str(error)) < 700


class Work:
    def __init__(self, completes):
        self.completes, self.waited = completes, None

    def wait(self, timeout=None):
        self.waited = timeout
        return self.completes


def bare_transport(deadline):
    """A transport without torch: only its wait is exercised here."""
    transport = _TensorTransport.__new__(_TensorTransport)
    transport.deadline, transport.failure = deadline, []
    return transport


def test_a_collective_waits_no_longer_than_the_checks_deadline():
    work = Work(completes=False)
    with pytest.raises(TimeoutError, match="did not complete by the check's deadline"):
        bare_transport(time.monotonic() + 2.5)._complete(work)
    assert 0 < work.waited.total_seconds() <= 2.5


def test_a_collective_past_the_deadline_is_not_waited_on():
    work = Work(completes=True)
    with pytest.raises(TimeoutError):
        bare_transport(time.monotonic() - 1)._complete(work)
    assert work.waited is None


def test_a_collective_that_completes_in_time_returns():
    work = Work(completes=True)
    bare_transport(time.monotonic() + 30)._complete(work)
    assert work.waited.total_seconds() > 29


def test_kept_for_the_roll_call_is_a_fifth_of_the_timeout_at_most_ten_seconds():
    assert _roll_call.kept_for(5) == 1.0
    assert _roll_call.kept_for(1800) == 10.0
