#!/usr/bin/env python3
"""The house around the engine, checked: the faces, the Python package's
rooms and the C ABI as Python declares it. (scripts/check_layers.py checks
the engine's own rooms.)

- **Faces** (launcher/, cli/src/, web/src/, python/capi/) include the engine
  by its public headers only ("tunelock/<room>/..."), never a private one
  ("<room>/x.hpp" of engine/src), and only the faces and device libraries
  each may use: the page is offline (no runtime/, which is the process, no
  launcher, no device library), the CLI runs no kernel family.
- **The Python package's rooms** (python/tunelock/): each module imports only
  modules of the rooms before its own, and the adapters (one interception
  each) never import one another; they meet in the registry (`_adapters`).
- **The C ABI**: every signature python/tunelock/_native.py declares for
  ctypes has the arity and the types of its prototype in
  python/include/tunelock/c_api.h, the runner's struct has the header's
  fields in the header's order, and every C function the package calls is
  declared there.

Exits 1 naming each file (and line) that breaks a rule; 0 when none does;
2 when PROJECT_DIR is not a tunelock tree.

Usage: check_faces.py [PROJECT_DIR]  (default: the project beside this script)
"""
import ast
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import ROOMS as ENGINE_ROOMS, includes  # noqa: E402  (the engine's own check)

# Per face: its folder, the faces' and device libraries' headers it must
# not include, and the engine rooms it must not include.
FACE_RULES = {
    "launcher": ("launcher", ("tunelock/c_api.h", "emscripten"), ()),
    "cli": ("cli/src", ("tunelock/launcher/", "tunelock/c_api.h", "tunelock/cuda/", "cuda", "cupti",
                        "ucp/", "ucs/", "emscripten"), ()),
    "page": ("web/src", ("tunelock/launcher/", "tunelock/c_api.h", "tunelock/watch.h",
                         "tunelock/cuda/", "cuda", "cupti", "ucp/", "ucs/"), ("runtime",)),
    "C ABI": ("python/capi", ("tunelock/cuda/", "cuda", "cupti", "emscripten"), ()),
}

# The Python package's rooms, in order; a module imports only modules of
# the rooms before its own. ADAPTERS share one room and import none of
# each other.
PYTHON_ROOMS = [
    ("engine access", ["_introspection", "_native", "_arguments"]),
    ("engine texts", ["_hooks"]),
    ("the driver", ["_driver"]),
    ("bits and runs", ["_bits"]),
    ("verification over a group", ["_roll_call", "distributed"]),
    ("the user API", ["_api"]),
    ("offline tools", ["_offline"]),
    ("the adapter registry", ["_adapters"]),
    ("adapter helpers", ["_inductor_describe"]),
    ("adapters", ["triton", "inductor"]),
    ("the launch watch", ["watch"]),
    ("the package", ["__init__", "__main__"]),
]
ADAPTER_ROOM = "adapters"


# ---- faces -------------------------------------------------------------

def source_files(folder):
    for top, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith((".hpp", ".cpp", ".h", ".cu", ".cuh")):
                yield os.path.join(top, name)


def face_problems(project):
    private = set()
    for room in ENGINE_ROOMS:
        folder = os.path.join(project, "engine", "src", room)
        for path in source_files(folder):
            private.add(os.path.relpath(path, os.path.join(project, "engine", "src")))
    found = []
    for face, (folder, forbidden, rooms) in FACE_RULES.items():
        for path in source_files(os.path.join(project, folder)):
            shown = os.path.relpath(path, project)
            for number, _, target in includes(path):
                where = f"{shown}:{number}"
                if target in private:
                    found.append(f"{where}: the {face} includes the engine's private \"{target}\"; "
                                 "a face uses the public headers (\"tunelock/<room>/...\")")
                elif any(target.startswith(f) for f in forbidden):
                    found.append(f"{where}: the {face} includes {target}, which it must not use")
                elif target.startswith("tunelock/") and target.split("/")[1] in rooms:
                    found.append(f"{where}: the {face} includes the engine's "
                                 f"{target.split('/')[1]}/ room ({target}), which it must not use")
    return found


# ---- the Python package --------------------------------------------------

def imported_modules(tree):
    """(line, module) for every module of the package a module imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 0 and not (base == "tunelock" or base.startswith("tunelock.")):
                continue
            base = base[len("tunelock"):].lstrip(".") if node.level == 0 else base
            if base:
                yield node.lineno, base.split(".")[0]
            else:
                for alias in node.names:
                    yield node.lineno, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "tunelock" and len(parts) > 1:
                    yield node.lineno, parts[1]


def python_problems(project):
    package = os.path.join(project, "python", "tunelock")
    room_of = {}
    for index, (room, modules) in enumerate(PYTHON_ROOMS):
        for module in modules:
            room_of[module] = (index, room)
    order = " < ".join(room for room, _ in PYTHON_ROOMS)
    found = []
    for name in sorted(os.listdir(package)):
        if not name.endswith(".py"):
            continue
        module = name[:-3]
        shown = os.path.join("python", "tunelock", name)
        if module not in room_of:
            found.append(f"{shown}: not in a room (add it to PYTHON_ROOMS in "
                         "scripts/check_faces.py)")
            continue
        mine, room = room_of[module]
        with open(os.path.join(package, name), encoding="utf-8") as f:
            tree = ast.parse(f.read(), shown)
        for line, other in imported_modules(tree):
            if other == module or other not in room_of:
                continue
            theirs, their_room = room_of[other]
            if room == ADAPTER_ROOM and their_room == ADAPTER_ROOM:
                found.append(f"{shown}:{line}: the adapter {module} imports the adapter {other}; "
                             "adapters meet in the registry (_adapters), never in each other")
            elif theirs > mine:
                found.append(f"{shown}:{line}: {module} ({room}) imports {other} ({their_room}), "
                             f"a room after its own; the order is {order}")
    return found


# ---- the C ABI -----------------------------------------------------------

PROTOTYPE = re.compile(r"^\s*(?!typedef)([A-Za-z_][\w\s\*]*?[\s\*])(tunelock_\w+)\s*\(([^)]*)\)\s*;",
                       re.MULTILINE)
C_TYPES = {
    "const char*": {"c_char_p"},
    "char**": {"c_void_p", "POINTER(c_char_p)"},
    "char*": {"c_void_p", "c_char_p"},
    "void*": {"c_void_p"},
    "int": {"c_int"},
    "int64_t": {"c_int64"},
    "uint64_t": {"c_uint64"},
    "size_t": {"c_size_t"},
    "int*": {"POINTER(c_int)"},
    "const int*": {"POINTER(c_int)"},
    "int64_t*": {"POINTER(c_int64)"},
    "uint64_t*": {"POINTER(c_uint64)"},
    "tunelock_gather_fn": {"GATHER_FN"},
    "tunelock_all_reduce_fn": {"ALL_REDUCE_FN"},
    "tunelock_log_fn": {"LOG_FN"},
    "const tunelock_call_runner*": {"POINTER(CallRunnerStruct)"},
    "void": {"None"},
}


def c_type(text):
    """A parameter's or result's type as the table above spells it."""
    text = re.sub(r"\s+", " ", text.strip())
    text = re.sub(r"\s*\*", "*", text)
    return text


def header_prototypes(header_text):
    """name -> (result type, [parameter types]) of every function prototype."""
    text = re.sub(r"/\*.*?\*/", "", header_text, flags=re.DOTALL)
    prototypes = {}
    for match in PROTOTYPE.finditer(text):
        result, name, parameters = match.groups()
        types = []
        for parameter in parameters.split(","):
            parameter = parameter.strip()
            if not parameter or parameter == "void":
                continue
            parameter = re.sub(r"\b\w+$", "", parameter)  # the parameter's name
            types.append(c_type(parameter))
        prototypes[name] = (c_type(result), types)
    return prototypes


def header_runner_fields(header_text):
    text = re.sub(r"/\*.*?\*/", "", header_text, flags=re.DOTALL)
    match = re.search(r"typedef struct tunelock_call_runner \{(.*?)\} tunelock_call_runner;", text,
                      re.DOTALL)
    if not match:
        return None
    fields = []
    for declaration in match.group(1).split(";"):
        declaration = declaration.strip()
        if not declaration:
            continue
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", declaration)
        fields.append(pointer.group(1) if pointer else re.findall(r"\w+", declaration)[-1])
    return fields


class _Named:
    """Stands in for ctypes while the declarations are read: every type is its name."""

    def __getattr__(self, name):
        if name == "POINTER":
            return lambda inner: f"POINTER({inner})"
        if name == "CFUNCTYPE":
            return lambda *types: "CFUNCTYPE"
        return name


def declared_signatures(native_path):
    """(name -> (argument types, result type), runner field names, lines) from
    _native.py's _SIGNATURES and CallRunnerStruct, read without loading the
    library: the declarations are evaluated with every ctypes type as its name."""
    with open(native_path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), native_path)
    names = {"ctypes": _Named(), "_OUT": "POINTER(c_char_p)"}
    signatures, fields, lines = None, None, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target.endswith("_FN"):
                names[target] = target
            elif target == "_SIGNATURES":
                signatures = eval(compile(ast.Expression(node.value), native_path, "eval"),
                                  {"__builtins__": {}}, names)
                for key in node.value.keys:
                    lines[key.value] = key.lineno
        elif isinstance(node, ast.ClassDef) and node.name == "CallRunnerStruct":
            names["CallRunnerStruct"] = "CallRunnerStruct"
            for item in node.body:
                if isinstance(item, ast.Assign) and item.targets[0].id == "_fields_":
                    fields = [element.elts[0].value for element in item.value.elts]
    return signatures, fields, lines


def called_functions(package):
    called = {}
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    for function in re.findall(r"(?:\blib\.|\")(tunelock_\w+)", line):
                        called.setdefault(function, f"python/tunelock/{name}:{number}")
    return called


def c_abi_problems(project):
    header_path = os.path.join(project, "python", "include", "tunelock", "c_api.h")
    native_path = os.path.join(project, "python", "tunelock", "_native.py")
    with open(header_path, encoding="utf-8") as f:
        header = f.read()
    prototypes = header_prototypes(header)
    signatures, fields, lines = declared_signatures(native_path)
    found = []
    shown = "python/tunelock/_native.py"
    if signatures is None:
        return [f"{shown}: no _SIGNATURES table of the C ABI's functions"]
    for name, (arguments, result) in signatures.items():
        where = f"{shown}:{lines.get(name, 0)}"
        if name not in prototypes:
            found.append(f"{where}: {name} is not declared in c_api.h")
            continue
        c_result, c_parameters = prototypes[name]
        if len(arguments) != len(c_parameters):
            found.append(f"{where}: {name} takes {len(c_parameters)} argument(s) in c_api.h, "
                         f"{len(arguments)} here")
            continue
        for index, (declared, expected) in enumerate(zip(arguments, c_parameters)):
            allowed = C_TYPES.get(expected)
            if allowed is None:
                found.append(f"{where}: {name} argument {index + 1}: c_api.h's type {expected} "
                             "has no ctypes spelling in scripts/check_faces.py")
            elif str(declared) not in allowed:
                found.append(f"{where}: {name} argument {index + 1} is {expected} in c_api.h, "
                             f"declared {declared} here")
        if str(result) not in C_TYPES.get(c_result, {c_result}):
            found.append(f"{where}: {name} returns {c_result} in c_api.h, declared {result} here")
    for function, at in sorted(called_functions(os.path.dirname(native_path)).items()):
        if function not in signatures:
            found.append(f"{at}: calls {function}, which _SIGNATURES does not declare")
    header_fields = header_runner_fields(header)
    if header_fields != fields:
        found.append(f"{shown}: CallRunnerStruct's fields {fields} are not c_api.h's "
                     f"tunelock_call_runner fields {header_fields}, in that order")
    return found


def main(argv):
    project = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                        "..")
    if not os.path.isfile(os.path.join(project, "python", "include", "tunelock", "c_api.h")):
        print(f"check_faces: {project} has no python/include/tunelock/c_api.h: not a tunelock tree",
              file=sys.stderr)
        return 2
    found = face_problems(project) + python_problems(project) + c_abi_problems(project)
    for line in found:
        print(line, file=sys.stderr)
    print(f"{len(FACE_RULES)} faces, {sum(len(m) for _, m in PYTHON_ROOMS)} Python modules in "
          f"{len(PYTHON_ROOMS)} rooms, the C ABI as Python declares it: "
          f"{'every rule holds' if not found else f'{len(found)} problem(s)'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
