"""Stand-in of torch._inductor.select_algorithm (torch 2.11): the template
chooser max-autotune runs at compile time. Choices are timed on a noisy
clock (NOISE_SEED, as each process's clock differs), the fastest wins, and
the feedback savers get the timings, as Inductor's do."""
import random

NOISE_SEED = 0
_feedback_savers = []
benchmarked = []  # each benchmark: the descriptions of the choices timed
compiled = []  # each choice handed back: its name


def add_feedback_saver(fn):
    _feedback_savers.append(fn)


class ChoiceCaller:
    def __init__(self, name, description, ms):
        self.name, self.description, self.ms = name, description, ms

    def benchmark(self):
        noise = random.Random(f"{NOISE_SEED}|{self.description}|{self.name}").uniform(0, 0.3)
        return self.ms * (1 + noise)

    def output_node(self):
        compiled.append(self.name)
        return ("node", self.name, self.description)


class TritonTemplateCaller(ChoiceCaller):
    pass


class ExternKernelCaller(ChoiceCaller):
    def __init__(self, name, ms):
        super().__init__(name, "", ms)


class AlgorithmSelectorCache:
    def __call__(self, name, choices, input_nodes, layout, input_gen_fns=None,
                 precompilation_timeout_seconds=3600, return_multi_template=False):
        if len(choices) == 1:
            return choices[0].output_node()
        timings = {choice: choice.benchmark() for choice in choices}
        benchmarked.append([c.description or c.name for c in choices])
        for saver in _feedback_savers:
            saver(timings, name, input_nodes, choices, None, {})
        return min(timings, key=timings.__getitem__).output_node()


class Layout:
    def __init__(self, dtype, size, stride, offset=0):
        self.dtype, self.size, self.stride, self.offset = dtype, size, stride, offset


class Node:
    def __init__(self, dtype, size, stride, offset=0):
        self.layout = Layout(dtype, size, stride, offset)

    def get_size(self):
        return self.layout.size

    def get_stride(self):
        return self.layout.stride

    def get_dtype(self):
        return self.layout.dtype

    def get_layout(self):
        return self.layout
