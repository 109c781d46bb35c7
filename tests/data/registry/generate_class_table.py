#!/usr/bin/env python3
"""Writes registry/data/transformers_config_classes.json: what each transformers config
class of a pinned version adds to PretrainedConfig, read from its configuration_<type>.py,
for the C++ emulation of `AutoConfig.from_pretrained(...).to_diff_dict()`
(registry/src/config_diff.cpp) that optimum-neuron's arch digest hashes.

The sources are read statically (Python's ast), never imported:
  - the __init__ arguments and their default values;
  - __init__'s body as a list of operations in source order: `store` (self.x = x),
    `const` (self.x = <constant>), `super` (PretrainedConfig.__init__ and the arguments it
    receives), `sub_config` (how a composite builds text_config / vision_config) and
    `rule` (a named computation: head_dim from hidden_size, layer_types...);
  - attribute_map, the properties with a setter, sub_configs.
Each computation is recognised by its exact source text (RULES below) and implemented once
in C++; a statement the generator does not recognise stops it, so a new transformers
version cannot change a class behind the table's back. Validation-only statements
(rope_config_validation, raise, logging) are skipped.

Usage (a git checkout of huggingface/transformers or a full-history fork, e.g. the
`fetch` tool's snapshot of cyyever/transformers):
  python3 tests/data/registry/generate_class_table.py --transformers-git DIR \
      > registry/data/transformers_config_classes.json
"""
import argparse
import ast
import json
import sys

import transformers_source

# Base-class statements: in PretrainedConfig itself, read separately.
SKIPPED_CALLS = ("rope_config_validation(", "layer_type_validation(", "self._rope_scaling_validation(",
                 "logger.", "warnings.warn(")

# Source text of a statement (ast.unparse) -> rule name implemented in config_diff.cpp.
RULES = {
    "if num_key_value_heads is None:\n    num_key_value_heads = num_attention_heads": "kv_heads_from_heads",
    "self.head_dim = head_dim if head_dim is not None else self.hidden_size // self.num_attention_heads":
        "head_dim_from_heads",
    "if self.rope_scaling is not None and 'type' in self.rope_scaling:\n"
    "    self.rope_scaling['rope_type'] = self.rope_scaling['type']": "rope_type_from_type",
    "self.sliding_window = sliding_window if self.use_sliding_window else None": "sliding_window_if_used",
    "self.sliding_window = sliding_window if use_sliding_window else None": "sliding_window_if_used",
    "if self.layer_types is None:\n    self.layer_types = ['sliding_attention' if self.sliding_window is not None "
    "and i >= self.max_window_layers else 'full_attention' for i in range(self.num_hidden_layers)]":
        "layer_types_from_max_window",
    "if use_bidirectional_attention:\n    self.sliding_window = self.sliding_window // 2 + 1":
        "bidirectional_sliding_window",
    "self._sliding_window_pattern = kwargs.get('sliding_window_pattern', 6)": "sliding_window_pattern",
    "if self.layer_types is None:\n    self.layer_types = ['sliding_attention' if bool((i + 1) % "
    "self._sliding_window_pattern) else 'full_attention' for i in range(self.num_hidden_layers)]":
        "layer_types_from_sliding_pattern",
    "if no_rope_layers is None:\n    self.no_rope_layers = [int((layer_idx + 1) % no_rope_layer_interval != 0) "
    "for layer_idx in range(num_hidden_layers)]\nelse:\n    self.no_rope_layers = no_rope_layers":
        "no_rope_layers_from_interval",
    "if layer_types is None:\n    layer_types = []\n    for layer_idx in range(num_hidden_layers):\n"
    "        has_rope = self.no_rope_layers[layer_idx]\n"
    "        if use_sliding_window and sliding_window is not None and (not has_rope):\n"
    "            layer_types.append('sliding_attention')\n        else:\n"
    "            layer_types.append('full_attention')": "layer_types_from_no_rope_sliding",
    "if no_rope_layers == []:\n    no_rope_layers = None": "llama4_no_rope_layers",
    "default_no_rope_layers = [int((layer_idx + 1) % no_rope_layer_interval != 0) for layer_idx in "
    "range(self.num_hidden_layers)]": "llama4_no_rope_layers",
    "self.no_rope_layers = no_rope_layers if no_rope_layers else default_no_rope_layers": "llama4_no_rope_layers",
    "self.moe_layers = moe_layers if moe_layers is not None else list(range(interleave_moe_layer_step - 1, "
    "num_hidden_layers, interleave_moe_layer_step))": "moe_layers_from_step",
    "if layer_types is None:\n    self.layer_types = ['chunked_attention' if no_rope else 'full_attention' for "
    "no_rope in self.no_rope_layers]": "layer_types_chunked_from_no_rope",
    "self._rope_scaling_adjustment()": "phi3_rope_scaling_longrope",
    "self.mlp_only_layers = [] if mlp_only_layers is None else mlp_only_layers": "mlp_only_layers_default_empty",
    "self.projection_size = projection_size if projection_size is not None else hidden_size":
        "projection_size_from_hidden",
    "self.num_decoder_layers = num_decoder_layers if num_decoder_layers is not None else self.num_layers":
        "num_decoder_layers_from_layers",
    "act_info = self.feed_forward_proj.split('-')": "t5_dense_act_fn",
    "self.dense_act_fn = act_info[-1]": "t5_dense_act_fn",
    "self.is_gated_act = act_info[0] == 'gated'": "t5_dense_act_fn",
    "if feed_forward_proj == 'gated-gelu':\n    self.dense_act_fn = 'gelu_new'": "t5_dense_act_fn",
    "self._vision_feature_layer = kwargs.get('vision_feature_layer', -1)": "llama4_vision_feature_layer",
    # CLIPConfig's pre-4.27 text_config_dict / vision_config_dict: not emulated (the C++
    # side reports a config carrying them as inexact).
    "text_config_dict = kwargs.pop('text_config_dict', None)": "clip_legacy_config_dicts",
    "vision_config_dict = kwargs.pop('vision_config_dict', None)": "clip_legacy_config_dicts",
}
# Statements whose text starts so: rules whose body holds messages (the whole statement
# is compared up to the first message).
RULE_PREFIXES = {
    "if text_config_dict is not None:": "clip_legacy_config_dicts",
    "if vision_config_dict is not None:": "clip_legacy_config_dicts",
}


def is_validation(statement):
    """An if whose body only raises or logs (argument checks), or a skipped call."""
    text = ast.unparse(statement)
    if isinstance(statement, ast.FunctionDef):
        return True  # a local function (Llama4VisionConfig defines unused properties inside __init__)
    if isinstance(statement, ast.Expr):
        return text.startswith(SKIPPED_CALLS) or isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.If) and not statement.orelse:
        return all(isinstance(s, ast.Raise) or ast.unparse(s).startswith(SKIPPED_CALLS) for s in statement.body)
    return False


def literal(node, where):
    try:
        return ast.literal_eval(node)
    except ValueError:
        # Constant arithmetic such as 4096 * 32.
        value = eval(compile(ast.Expression(node), where, "eval"), {"__builtins__": {}})  # noqa: S307
        if not isinstance(value, (int, float, str, bool, type(None), list, dict)):
            raise SystemExit(f"{where}: default {ast.unparse(node)} is not a JSON value")
        return value


def argument_defaults(function, where):
    args = function.args
    names = [a.arg for a in args.args[1:]] + [a.arg for a in args.kwonlyargs]
    defaults = list(args.defaults) + [d for d in args.kw_defaults]
    result = {}
    positional = args.args[1:]
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        result[arg.arg] = literal(default, where)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            result[arg.arg] = literal(default, where)
    missing = [n for n in names if n not in result]
    if missing or len(defaults) < len(names) - len(missing):
        raise SystemExit(f"{where}: arguments without a default: {missing}")
    return result


def value_spec(node, arguments, where):
    """An expression passed along: an __init__ argument by name, or a constant."""
    if isinstance(node, ast.Name) and node.id in arguments:
        return {"argument": node.id}
    return {"value": literal(node, where)}


class ClassReader:
    def __init__(self, class_types):
        self.class_types = class_types  # class name -> model_type, over every file read

    def sub_config_type(self, node):
        if isinstance(node, ast.Name):
            return self.class_types.get(node.id)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "CONFIG_MAPPING":
            return ast.literal_eval(node.slice)
        return None

    def sub_config_op(self, key, cls_attr, body, arguments, where):
        """How __init__ builds sub-config `key` from a dict, or when it is None."""
        op = {"op": "sub_config", "key": key, "class": cls_attr, "default_type": None, "default_arguments": {},
              "dict_type_default": None}
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and ast.unparse(node.func.value) == key and len(node.args) == 2 \
                    and ast.literal_eval(node.args[0]) == "model_type":
                op["dict_type_default"] = ast.literal_eval(node.args[1])
            if isinstance(node, ast.If) and ast.unparse(node.test) == f"{key} is None":
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                        call = statement.value
                        op["default_type"] = self.sub_config_type(call.func)
                        op["default_arguments"] = {k.arg: value_spec(k.value, arguments, where) for k in call.keywords}
                    elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Dict):
                        op["default_type"] = cls_attr  # built below as Class(**{})
        if op["default_type"] is None:
            raise SystemExit(f"{where}: cannot tell how {key} is built when it is None")
        return op

    def read_class(self, node, where):
        info = {"class": node.name, "attribute_map": {}, "properties": {}, "sub_configs": {},
                "has_no_defaults_at_init": False}
        init = None
        for item in node.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                name = item.targets[0].id
                if name == "attribute_map":
                    info["attribute_map"] = ast.literal_eval(item.value)
                elif name == "has_no_defaults_at_init":
                    info["has_no_defaults_at_init"] = ast.literal_eval(item.value)
                elif name == "sub_configs":
                    for k, v in zip(item.value.keys, item.value.values):
                        info["sub_configs"][ast.literal_eval(k)] = (
                            "auto" if ast.unparse(v) == "AutoConfig" else self.class_types[v.id])
            elif isinstance(item, ast.FunctionDef) and item.name == "__init__":
                init = item
            elif isinstance(item, ast.FunctionDef) and any(ast.unparse(d).endswith(".setter")
                                                           for d in item.decorator_list):
                # @x.setter: assigning x stores self.<target> instead.
                targets = [t.attr for s in item.body if isinstance(s, ast.Assign) for t in s.targets
                           if isinstance(t, ast.Attribute)]
                info["properties"][item.name] = targets[0] if targets else None
        if init is None:
            raise SystemExit(f"{where}: {node.name} has no __init__")
        arguments = argument_defaults(init, where)
        info["arguments"] = arguments
        info["operations"] = self.operations(init.body, arguments, info, where)
        return info

    def operations(self, body, arguments, info, where):
        ops = []
        pending_sub_configs = dict(info["sub_configs"])
        for statement in body:
            text = ast.unparse(statement)
            if is_validation(statement):
                continue
            rule = RULES.get(text) or next((r for p, r in RULE_PREFIXES.items() if text.startswith(p)), None)
            if rule is not None:
                if not ops or ops[-1] != {"op": "rule", "rule": rule}:
                    ops.append({"op": "rule", "rule": rule})
                continue
            names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(statement) if isinstance(n, ast.Attribute)}
            mentioned = [k for k in info["sub_configs"] if k in names]
            if mentioned:
                for key in mentioned:
                    if key in pending_sub_configs:
                        ops.append(self.sub_config_op(key, pending_sub_configs.pop(key), body, arguments, where))
                continue  # the rest of how that sub-config is built
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                    and ast.unparse(statement.value.func) == "super().__init__":
                call = statement.value
                ops.append({"op": "super",
                            "arguments": {k.arg: value_spec(k.value, arguments, where)
                                          for k in call.keywords if k.arg is not None}})
                continue
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Attribute) \
                    and ast.unparse(statement.targets[0].value) == "self":
                attribute = statement.targets[0].attr
                if isinstance(statement.value, ast.Name) and statement.value.id in arguments:
                    ops.append({"op": "store", "attribute": attribute, "argument": statement.value.id})
                    continue
                try:
                    ops.append({"op": "const", "attribute": attribute, "value": literal(statement.value, where)})
                    continue
                except (ValueError, NameError, SyntaxError, TypeError, SystemExit):
                    pass
            raise SystemExit(f"{where}: statement not understood, add a rule for it:\n{text}")
        return ops


def base_defaults():
    """PretrainedConfig().to_dict() minus model_type and transformers_version, run from the
    checkout (configuration_utils.py is the one file the C++ side restates by hand: its
    __init__ is generic code, not a table)."""
    from transformers.configuration_utils import PretrainedConfig
    d = PretrainedConfig().to_dict()
    for key in ("transformers_version", "model_type"):
        d.pop(key, None)
    d["id2label"] = {str(k): v for k, v in d["id2label"].items()}
    return d


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transformers-git", required=True)
    parser.add_argument("--revision", default=transformers_source.PINNED_REVISION)
    options = parser.parse_args()
    checkout = transformers_source.install(options.transformers_git, options.revision)

    folders = sorted(set(transformers_source.MODEL_FILES.values()))
    trees = {f: ast.parse(checkout.model_source(f)) for f in folders}
    class_types = {}
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.Assign) and ast.unparse(item.targets[0]) == "model_type":
                        class_types[node.name] = ast.literal_eval(item.value)
    reader = ClassReader(class_types)
    classes = {}
    for folder, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in class_types:
                where = f"models/{folder}/configuration_{folder}.py:{node.name}"
                info = reader.read_class(node, where)
                info["source"] = f"src/transformers/models/{folder}/configuration_{folder}.py"
                classes[class_types[node.name]] = info
    # Cross-check the static reading against the class run from the checkout: every
    # default argument stored under its own name must come back from cls().to_dict().
    for model_type, info in classes.items():
        live = transformers_source.config_class(model_type)().to_dict()
        for op in info["operations"]:
            if op["op"] == "store" and op["attribute"] == op["argument"] and op["attribute"] in live:
                rules = {o.get("rule") for o in info["operations"]}
                derived = live[op["attribute"]] != info["arguments"][op["argument"]]
                if derived and not rules - {None}:
                    raise SystemExit(f"{model_type}.{op['attribute']}: table {info['arguments'][op['argument']]!r}"
                                     f" but the class gives {live[op['attribute']]!r}")
    table = {
        "transformers_version": transformers_source.PINNED_VERSION,
        "transformers_revision": options.revision,
        "generated_by": "tests/data/registry/generate_class_table.py",
        "base_defaults": base_defaults(),
        "classes": classes,
    }
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
