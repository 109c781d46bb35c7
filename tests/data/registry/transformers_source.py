"""Loads the config classes of a pinned transformers revision straight from a git checkout
(a fetched snapshot of huggingface/transformers or one of its full-history forks), without
installing transformers: the files are read with `git show <rev>:<path>` and executed with
stand-ins for the modules a config class never needs to compute its attributes (hub I/O,
torch, ONNX export, packaging). Nothing here is copied from transformers: the code runs
from the checkout each time a generator runs, and only its results are committed.

Used by generate_class_table.py (reads the sources, statically) and
generate_diff_vectors.py (runs them: transformers' own __init__, to_dict, to_diff_dict).
"""
import importlib.abc
import importlib.machinery
import subprocess
import sys
import types

# transformers 4.57.x as optimum-neuron main pins it (`transformers~=4.57.1`): main's last
# commit before the v4.57.0 release (2025-10-03), whose __init__ says 4.57.0.dev0. Between it
# and main's bump to 5.0.0.dev0 only three commits touched the files read here: resume_download
# removed from configuration_utils (no attribute), `not in [x]` -> `!= x` in clip/phi3 (same
# result) and MixtralConfig.attribute_map {"num_experts": "num_local_experts"} (#40132).
PINNED_REVISION = "f22cb1e8689905091acb07e238b670aadde1e4ee"
PINNED_VERSION = "4.57.1"

# The model types optimum-neuron main registers (models/inference/auto_models.py), the
# sub-config types their composite configs build, and the 8 types neuron-cache had before.
MODEL_FILES = {
    "llama": "llama", "mistral": "mistral", "mixtral": "mixtral", "qwen2": "qwen2", "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe", "granite": "granite", "gpt2": "gpt2", "bert": "bert", "t5": "t5",
    "gemma3": "gemma3", "gemma3_text": "gemma3", "llama4": "llama4", "llama4_text": "llama4",
    "llama4_vision_model": "llama4", "phi3": "phi3", "smollm3": "smollm3", "idefics3": "idefics3",
    "idefics3_vision": "idefics3", "siglip": "siglip", "siglip_text_model": "siglip",
    "siglip_vision_model": "siglip", "clip": "clip", "clip_text_model": "clip", "clip_vision_model": "clip",
    "llava": "llava",
}


class Checkout:
    def __init__(self, git_dir, revision=PINNED_REVISION):
        self.git_dir = git_dir
        self.revision = revision

    def read(self, path):
        out = subprocess.run(["git", "-C", self.git_dir, "show", f"{self.revision}:{path}"],
                             capture_output=True, check=True)
        return out.stdout.decode("utf-8")

    def model_source(self, folder):
        return self.read(f"src/transformers/models/{folder}/configuration_{folder}.py")


class _Anything:
    """Stands for an object of a module a config class imports but does not need
    (logger, hub helpers): every attribute and call gives another one, and it is falsy."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __bool__(self):
        return False


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name[:1].isupper() and not name.isupper():
            value = type(name, (), {"push_to_hub": lambda self: None})  # a base class (PushToHubMixin, OnnxConfig...)
        elif name.startswith("is_") and name.endswith("_available"):
            value = lambda *args, **kwargs: False  # noqa: E731  no torch: dtype stays the string
        elif name == "copy_func":
            value = lambda f: f  # noqa: E731
        else:
            value = _Anything()
        setattr(self, name, value)
        return value


class _Loader(importlib.abc.Loader):
    def __init__(self, finder):
        self.finder = finder

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        source = self.finder.source_of(name)
        if source is None:  # a package
            module.__path__ = []
            if name == "transformers":
                module.__version__ = PINNED_VERSION
            if name == "transformers.models.auto":
                module.CONFIG_MAPPING = _ConfigMapping()
                module.AutoConfig = _AutoConfig
            return
        exec(compile(source, f"{self.finder.checkout.revision}:{name}", "exec"), module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    REAL = {"transformers.configuration_utils": "src/transformers/configuration_utils.py",
            "transformers.modeling_rope_utils": "src/transformers/modeling_rope_utils.py"}

    def __init__(self, checkout):
        self.checkout = checkout

    def source_of(self, name):
        if name in self.REAL:
            return self.checkout.read(self.REAL[name])
        parts = name.split(".")
        if len(parts) == 4 and parts[1] == "models" and parts[3].startswith("configuration_"):
            return self.checkout.model_source(parts[2])
        if len(parts) == 3 and parts[1] == "models" and parts[2] != "auto":
            # `from ..siglip import SiglipVisionConfig`: the package re-exports its config classes.
            return f"from .configuration_{parts[2]} import *\n"
        return None

    def find_spec(self, name, path=None, target=None):
        if name == "packaging" or name.startswith("packaging."):
            return importlib.machinery.ModuleSpec(name, _StubLoader())
        if not (name == "transformers" or name.startswith("transformers.")):
            return None
        parts = name.split(".")
        known = (name in ("transformers", "transformers.models", "transformers.models.auto")
                 or name in self.REAL or (len(parts) >= 3 and parts[1] == "models"))
        if not known:
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        is_package = self.source_of(name) is None or len(parts) == 3
        return importlib.machinery.ModuleSpec(name, _Loader(self), is_package=is_package)


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def config_class(model_type):
    folder = MODEL_FILES.get(model_type)
    if folder is None:
        raise KeyError(f"model type {model_type!r} is not among the loaded sources")
    module = __import__(f"transformers.models.{folder}.configuration_{folder}", fromlist=["*"])
    for value in vars(module).values():
        if isinstance(value, type) and getattr(value, "model_type", None) == model_type \
                and value.__module__ == module.__name__:
            return value
    raise KeyError(f"no class with model_type {model_type!r} in configuration_{folder}.py")


class _ConfigMappingMeta(type):
    pass


class _ConfigMapping:
    def __getitem__(self, model_type):
        return config_class(model_type)

    def __contains__(self, model_type):
        return model_type in MODEL_FILES


class _AutoConfig:
    @staticmethod
    def for_model(model_type, *args, **kwargs):
        return config_class(model_type)(*args, **kwargs)


def install(git_dir, revision=PINNED_REVISION):
    """Makes `import transformers...` resolve to the checkout's files at `revision`."""
    checkout = Checkout(git_dir, revision)
    sys.meta_path.insert(0, _Finder(checkout))
    return checkout
