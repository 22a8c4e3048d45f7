"""Inductor's choices as the engine's data: a kernel, a key and candidate
configs that mean the same on every rank and every run.

Nothing here keys on what changes from process to process: no cache path,
process id or address, and none of Inductor's running counters (the `_17`
of `triton_mm_17`, the `_0` of `triton_poi_fused_add_0`).

- A template decision (max-autotune's GEMMs) is kernel `inductor.<op>`
  (`mm`, `addmm`, `bmm`, ...), keyed by the layouts of its inputs and its
  output (dtype, sizes, strides, offset). Each choice is a config whose
  algorithm names the template (`triton_mm`, `triton_mm_persistent_tma`,
  ...) or the ATen call (`aten_mm`), with the template's integer and
  boolean parameters and its launch options.
- A generated kernel (pointwise, reduction, persistent reduction) is kernel
  `inductor.<name without its index>`, keyed by a hash of its source (with
  the function's own name taken out) and its size hints; its candidates
  are its Triton configs (XBLOCK, R0_BLOCK, num_warps, num_stages, ...).
"""
import hashlib
import re

from tunelock._introspection import config_data

MODULE = "inductor"

_INDEX = re.compile(r"_\d+$")
_NOT_IN_A_NAME = re.compile(r"[\s,;=]")
# `BLOCK_K=32`, `EVEN_K=True`, `ACC_TYPE='tl.float32'` in a choice's description.
_DESCRIBED = re.compile(r"(\w+)=('[^']*'|\"[^\"]*\"|[^,\s]+)")


def without_index(name):
    """`triton_mm_17` -> `triton_mm`: Inductor numbers what it generates in
    the order it generates it, which other programs do not share."""
    return _INDEX.sub("", str(name))


def algorithm_name(text):
    """A name the engine takes as an algorithm (no space, ',', ';' or '=')."""
    return (_NOT_IN_A_NAME.sub("_", str(text)) or "unnamed")[:128]


def _ints(values, hint):
    return [int(v) for v in hint(list(values))]


def layout_text(dtype, sizes, strides, offset, hint):
    dtype = str(dtype).replace("torch.", "")
    size = "x".join(str(v) for v in _ints(sizes, hint))
    stride = "x".join(str(v) for v in _ints(strides, hint))
    return f"{dtype}[{size}]/[{stride}]+{int(hint([offset])[0])}"


def _node_layout(node, hint):
    layout = node.get_layout() if hasattr(node, "get_layout") else None
    offset = getattr(layout, "offset", 0) if layout is not None else 0
    return layout_text(node.get_dtype(), node.get_size(), node.get_stride(), offset, hint)


def template_key_args(input_nodes, layout, hint):
    """The (name, value) pairs of a template decision's key: each input's
    layout, then the output's."""
    pairs = [(f"in{i}", _node_layout(node, hint)) for i, node in enumerate(input_nodes)]
    pairs.append(("out", layout_text(layout.dtype, layout.size, layout.stride,
                                     getattr(layout, "offset", 0), hint)))
    return pairs


def is_aten(choice):
    """An ATen (extern) call rather than a generated kernel."""
    return type(choice).__name__ == "ExternKernelCaller"


def _described_parameters(description):
    kwargs, warps, stages = {}, 0, 0
    for name, value in _DESCRIBED.findall(description or ""):
        if value in ("True", "False"):
            number = int(value == "True")
        elif re.fullmatch(r"-?\d+", value):
            number = int(value)
        else:
            continue  # text (an accumulator type): the same for every choice of one call
        if name == "num_warps":
            warps = number
        elif name == "num_stages":
            stages = number
        else:
            kwargs[name] = number
    return kwargs, warps, stages


def choice_config(choice):
    """One template choice as a config with its algorithm."""
    if is_aten(choice):
        return {"kwargs": {}, "num_warps": 0, "num_stages": 0, "num_ctas": 1,
                "algorithm": algorithm_name(f"aten_{choice.name}")}
    kwargs, warps, stages = _described_parameters(getattr(choice, "description", ""))
    return {"kwargs": kwargs, "num_warps": warps, "num_stages": stages, "num_ctas": 1,
            "algorithm": algorithm_name(without_index(choice.name))}


def template_candidates(choices):
    """Every choice's config, in Inductor's order. Two choices a config
    cannot tell apart (a parameter only their text differs in) are told
    apart by VARIANT, numbered in that same order."""
    configs, seen = [], {}
    for choice in choices:
        config = choice_config(choice)
        text = repr(sorted(config["kwargs"].items())) + repr(
            (config["num_warps"], config["num_stages"], config["algorithm"]))
        count = seen.get(text, 0)
        seen[text] = count + 1
        if count:
            config["kwargs"]["VARIANT"] = count
        configs.append(config)
    return configs


def own_template_default(choices):
    """The choice Inductor takes when it does not benchmark (its
    deterministic mode): the first ATen call, else the first choice."""
    return next((i for i, choice in enumerate(choices) if is_aten(choice)), 0)


def kernel_name(autotuner):
    meta = getattr(autotuner, "inductor_meta", None) or {}
    name = meta.get("kernel_name") or getattr(autotuner.fn, "__name__", "") or "triton_kernel"
    return algorithm_name(without_index(name))


def source_digest(source):
    """A generated kernel's source without its own name, hashed: the name
    carries Inductor's index, the body does not."""
    body = re.sub(r"def [^(]+\(", "def (", str(source).strip(), count=1)
    return hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()[:16]


def size_hints_text(size_hints):
    if isinstance(size_hints, dict):
        return ",".join(f"{axis}:{int(size)}" for axis, size in size_hints.items())
    return ",".join(str(int(size)) for size in (size_hints or ()))


def kernel_key_args(autotuner):
    """The (name, value) pairs of a generated kernel's key."""
    source = getattr(autotuner.fn, "src", None) or ""
    return [("source", source_digest(source)),
            ("size_hints", size_hints_text(getattr(autotuner, "size_hints", None)))]


def kernel_candidates(launchers):
    return [config_data(launcher.config) for launcher in launchers]
