"""A stand-in of the torch that tunelock.inductor reads: only what a CPU
test needs (the version, `Tensor`, `cuda.is_available`). It shadows the
real torch in the processes python/tests/inductor_worker.py starts, never
in the test process itself."""
__version__ = "2.11.0-standin"


class Tensor:  # no stand-in tensor is one: the bits are compared as lists
    pass


class version:  # noqa: N801
    cuda = None


class cuda:  # noqa: N801 (torch's own spelling)
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def is_current_stream_capturing():
        return False
