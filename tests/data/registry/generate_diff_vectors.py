#!/usr/bin/env python3
"""Generates the arch-digest parity vectors: what optimum-neuron >= 0.4.5 files an entry
under, sha256(json.dumps({"model_type", "task", "config"}, sort_keys=True)), where `config`
is transformers' `AutoConfig.from_pretrained(...).to_diff_dict()` minus optimum's
CACHE_WHITE_LIST (optimum/neuron/cache/entries/single_model.py, cache_entry.py, main
213224e6), for text-generation of `config.get_text_config()`.

Independent of the C++ emulation (registry/src/config_diff.cpp and the class table it
loads): the config classes here are transformers' own, run from a git checkout of the
pinned revision (transformers_source.py: configuration_utils.py, modeling_rope_utils.py
and each configuration_<type>.py, with stand-ins only for hub I/O, torch and ONNX). The
C++ tests read diff_vectors.json and never run Python.

Inputs: configs/*.json, real public config.json files (configs/SOURCES.md says where each
comes from and which transformers version saved it), each also as a fine-tune (same
config, other _name_or_path) and a local copy (a path as _name_or_path); plus the
synthetic cases below (base-class edge cases, attribute maps, registries of every era).

Regenerate with:
  python3 tests/data/registry/generate_diff_vectors.py --transformers-git DIR \
      > tests/data/registry/diff_vectors.json
"""
import argparse
import copy
import hashlib
import json
import os
import sys

import transformers_source

TRANSFORMERS_VERSION = transformers_source.PINNED_VERSION

# optimum-neuron main, cache_entry.py
CACHE_WHITE_LIST = [
    "_name_or_path", "transformers_version", "_diffusers_version", "eos_token_id", "bos_token_id",
    "pad_token_id", "torchscript", "torch_dtype", "_commit_hash", "sample_size", "projection_dim",
    "_use_default_values", "_attn_implementation_autoset", "return_dict",
]

def generic_class(model_type):
    """A config class outside the loaded sources: PretrainedConfig with that model_type
    (neuron-cache applies PretrainedConfig's defaults only to such types)."""
    from transformers.configuration_utils import PretrainedConfig
    return type(f"Unknown_{model_type}", (PretrainedConfig,), {"model_type": model_type})


def from_pretrained(config_json):
    """AutoConfig.from_pretrained on a config.json text: the class its model_type maps to,
    then transformers' own from_dict()."""
    config_dict = json.loads(config_json)
    model_type = config_dict.get("model_type", "")
    try:
        cls = transformers_source.config_class(model_type)
    except KeyError:
        cls = generic_class(model_type)
    return cls.from_dict(config_dict)


def optimum_config(config):
    """SingleModelCacheEntry(model_id, config).config: to_diff_dict() minus the whitelist."""
    diff = config.to_diff_dict()
    diff.pop("neuron", None)
    for key in CACHE_WHITE_LIST:
        diff.pop(key, None)
    return diff


def arch_digest(model_type, task, config):
    arch = {"model_type": model_type, "task": task, "config": config}
    return hashlib.sha256(json.dumps(arch, sort_keys=True).encode("utf-8")).hexdigest()


def vector(name, config_json, task):
    config = from_pretrained(config_json)
    if task == "text-generation":
        config = config.get_text_config()  # optimum's lookup side
    diff = optimum_config(config)
    return {"name": name, "config": config_json, "task": task, "model_type": config.model_type,
            "diff_config": json.dumps(diff, sort_keys=True), "arch_digest": arch_digest(config.model_type, task, diff)}


# --- inputs --------------------------------------------------------------------------

# A Hub-style config.json as an older transformers wrote it: default-valued base keys,
# no head_dim / mlp_bias (added to LlamaConfig later).
hub_llama = {
    "_name_or_path": "acme/old-llama", "architectures": ["LlamaForCausalLM"], "attention_bias": False,
    "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 256, "initializer_range": 0.02,
    "intermediate_size": 688, "max_position_embeddings": 4096, "model_type": "llama", "num_attention_heads": 8,
    "num_hidden_layers": 2, "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.31.0", "use_cache": True, "vocab_size": 32000,
    "output_attentions": False, "output_hidden_states": False, "return_dict": True, "torchscript": False,
    "use_bfloat16": False, "max_length": 20, "do_sample": False, "temperature": 1.0, "top_p": 1.0,
    "id2label": {"0": "LABEL_0", "1": "LABEL_1"}, "label2id": {"LABEL_0": 0, "LABEL_1": 1},
    "chunk_size_feed_forward": 0, "is_encoder_decoder": False, "pruned_heads": {}, "problem_type": None,
}
# The same architecture as transformers 4.57 saves it (save_pretrained writes to_diff_dict).
saved_llama = dict(hub_llama)
for key in ("output_attentions", "output_hidden_states", "return_dict", "torchscript", "use_bfloat16",
            "max_length", "do_sample", "temperature", "top_p", "id2label", "label2id",
            "chunk_size_feed_forward", "is_encoder_decoder", "pruned_heads", "problem_type"):
    saved_llama.pop(key)
saved_llama.update({"head_dim": 32, "mlp_bias": False, "attention_dropout": 0.0, "dtype": "bfloat16",
                    "transformers_version": "4.57.1"})
saved_llama.pop("torch_dtype")
# A fine-tuned copy: other name, other special tokens, generation keys at their defaults.
finetuned_llama = dict(hub_llama)
finetuned_llama.update({"_name_or_path": "me/old-llama-ft", "eos_token_id": [2, 32001], "pad_token_id": 0,
                        "transformers_version": "4.44.2", "num_beams": 1, "top_k": 50})
# A local directory: a path as _name_or_path.
local_llama = dict(hub_llama)
local_llama.update({"_name_or_path": "/home/me/checkpoints/step-1000"})

vlm = {
    "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "image_token_index": 32000,
    "projector_hidden_act": "gelu", "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
    "image_seq_length": 576, "multimodal_projector_bias": True, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.57.1",
    "text_config": {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688, "num_attention_heads": 8,
                    "num_hidden_layers": 2, "max_position_embeddings": 4096, "vocab_size": 32064,
                    "rms_norm_eps": 1e-05, "torch_dtype": "float16", "output_attentions": False},
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "image_size": 336, "patch_size": 14,
                      "num_hidden_layers": 2, "projection_dim": 32, "return_dict": True},
}

others = {
    "mistral": {"model_type": "mistral", "hidden_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
                "intermediate_size": 256, "vocab_size": 1000, "sliding_window": None, "torchscript": False,
                "torch_dtype": "bfloat16", "return_dict": True, "tie_word_embeddings": False},
    "mixtral": {"model_type": "mixtral", "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
                "num_hidden_layers": 2, "intermediate_size": 256, "num_local_experts": 4, "vocab_size": 1000,
                "rope_theta": 1000000.0, "output_router_logits": False, "is_decoder": False},
    "qwen2": {"model_type": "qwen2", "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 3, "intermediate_size": 256, "vocab_size": 1000, "use_sliding_window": False,
              "sliding_window": 131072, "max_window_layers": 2, "tie_word_embeddings": True,
              "rope_scaling": {"type": "yarn", "factor": 4.0}, "torch_dtype": "bfloat16"},
    "qwen2-sliding": {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
                      "use_sliding_window": True, "sliding_window": 512, "max_window_layers": 1},
    "granite": {"model_type": "granite", "hidden_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
                "embedding_multiplier": 12.0, "logits_scaling": 8.0, "residual_multiplier": 0.22,
                "attention_multiplier": 0.0078125, "tie_word_embeddings": True, "max_length": 4096},
    # (GraniteConfig has no rope_scaling "type" -> "rope_type" copy: transformers 4.57
    # rejects {"type": "linear"} there, so no vector can hold it.)
    # One per type optimum main registers, shaped like the Hub configs of that type (the
    # keys their transformers versions wrote), small sizes.
    "qwen3_moe@4.51": {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 128,
                       "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                       "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
                       "norm_topk_prob": True, "mlp_only_layers": [], "max_window_layers": 3,
                       "sliding_window": None, "use_sliding_window": False, "rope_theta": 1000000.0,
                       "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.51.0"},
    "phi3-longrope@4.40": {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 128,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "original_max_position_embeddings": 4096,
                           "max_position_embeddings": 131072, "rope_scaling": {"type": "su", "short_factor": [1.0] * 16,
                                                                               "long_factor": [2.0] * 16},
                           "sliding_window": 262144, "bos_token_id": 1, "eos_token_id": 32000,
                           "pad_token_id": 32000, "torch_dtype": "bfloat16", "transformers_version": "4.40.2"},
    "phi4@4.47": {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 160,
                  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                  "max_position_embeddings": 16384, "original_max_position_embeddings": 16384, "rope_theta": 250000,
                  "rope_scaling": None, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "tie_word_embeddings": False,
                  "vocab_size": 100352, "bos_token_id": 100257, "eos_token_id": 100265, "pad_token_id": 100349,
                  "torch_dtype": "bfloat16", "transformers_version": "4.47.0"},
    "gemma3-1b@4.50": {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 128,
                       "num_hidden_layers": 7, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32,
                       "sliding_window": 512, "sliding_window_pattern": 6, "rope_local_base_freq": 10000,
                       "rope_theta": 1000000, "query_pre_attn_scalar": 256, "cache_implementation": "hybrid",
                       "attn_logit_softcapping": None, "final_logit_softcapping": None,
                       "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0"},
    "gemma3-vlm@4.50": {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                        "boi_token_index": 255999, "eoi_token_index": 256000, "image_token_index": 262144,
                        "mm_tokens_per_image": 256, "initializer_range": 0.02, "torch_dtype": "bfloat16",
                        "transformers_version": "4.50.0.dev0",
                        "text_config": {"model_type": "gemma3_text", "hidden_size": 128, "num_hidden_layers": 7,
                                        "head_dim": 32, "sliding_window": 1024, "rope_scaling": {
                                            "factor": 8.0, "rope_type": "linear"}},
                        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64,
                                          "image_size": 896, "intermediate_size": 128, "num_attention_heads": 4,
                                          "num_hidden_layers": 2, "patch_size": 14, "vision_use_head": False}},
    "llama4@4.51": {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
                    "boi_token_index": 200080, "eoi_token_index": 200081, "image_token_index": 200092,
                    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.51.0.dev0",
                    "text_config": {"model_type": "llama4_text", "hidden_size": 128, "num_hidden_layers": 4,
                                    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                                    "interleave_moe_layer_step": 1, "num_local_experts": 4,
                                    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                                     "original_max_position_embeddings": 8192,
                                                     "rope_type": "llama3"}, "attention_chunk_size": 8192,
                                    "no_rope_layers": []},
                    "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 64, "num_hidden_layers": 2,
                                      "num_attention_heads": 4, "vision_feature_layer": -1,
                                      "vision_feature_select_strategy": "default"}},
    "smollm3@4.53": {"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "hidden_size": 128,
                     "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "no_rope_layer_interval": 4, "use_sliding_window": False, "sliding_window": None,
                     "rope_theta": 5000000.0, "max_position_embeddings": 65536, "pad_token_id": 128004,
                     "bos_token_id": 128000, "eos_token_id": 128012, "torch_dtype": "bfloat16",
                     "transformers_version": "4.53.0.dev0"},
    "idefics3@4.46": {"architectures": ["Idefics3ForConditionalGeneration"], "model_type": "idefics3",
                      "image_token_id": 49190, "scale_factor": 4, "torch_dtype": "bfloat16",
                      "transformers_version": "4.46.0.dev0",
                      "text_config": {"_name_or_path": "HuggingFaceTB/SmolLM2-135M", "model_type": "llama",
                                      "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                                      "rope_theta": 273768.0, "vocab_size": 49280, "pad_token_id": 2},
                      "vision_config": {"model_type": "idefics3", "hidden_size": 64, "image_size": 512,
                                        "num_hidden_layers": 2, "num_attention_heads": 4, "patch_size": 16}},
    "mixtral@4.36": {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 128,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "num_local_experts": 4, "num_experts_per_tok": 2, "rope_theta": 1e6, "sliding_window": None,
                     "router_aux_loss_coef": 0.02, "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0"},
    "gpt2": {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "activation_function": "gelu_new",
             "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
             "output_past": True, "use_cache": True, "bos_token_id": 50256},
    "bert-3-labels": {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
                      "intermediate_size": 128, "num_labels": 3, "gradient_checkpointing": False,
                      "classifier_dropout": None, "output_hidden_states": False},
    # id2label keys are ints on the loaded config: json.dumps(sort_keys=True) orders them
    # as numbers (..., "9", "10", "11"), not as the strings of config.json.
    "bert-12-labels": {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
                       "id2label": {str(i): f"TAG_{i}" for i in range(12)},
                       "label2id": {f"TAG_{i}": i for i in range(12)}},
    "bert-labels": {"model_type": "bert", "hidden_size": 64, "id2label": {"0": "NEG", "1": "POS"},
                    "label2id": {"NEG": 0, "POS": 1}, "problem_type": "single_label_classification"},
    "t5": {"model_type": "t5", "d_model": 64, "d_ff": 128, "num_layers": 2, "num_heads": 4,
           "feed_forward_proj": "gated-gelu", "is_encoder_decoder": True, "decoder_start_token_id": 0,
           "tie_word_embeddings": False, "task_specific_params": {"summarization": {"prefix": "summarize: "}}},
    # attribute_map: config.json keys under the standard names land on the class's own
    # attributes after __init__ derived from the defaults (num_decoder_layers stays 6).
    "t5-attribute-map": {"model_type": "t5", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
                         "d_ff": 128, "feed_forward_proj": "relu"},
    "gpt2-attribute-map": {"model_type": "gpt2", "hidden_size": 64, "num_hidden_layers": 2, "n_head": 4,
                           "max_position_embeddings": 2048},
    "unknown-type": {"model_type": "olmo2", "hidden_size": 64, "return_dict": True, "tie_word_embeddings": True,
                     "output_attentions": False, "torch_dtype": "float32", "max_length": 20},
    "dtype-and-torch-dtype": {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
                              "dtype": "float16", "torch_dtype": "bfloat16"},
}

# Diffusers: the multi-model digest is over the raw component configs (not to_diff_dict).
sd_components = {
    "unet": {"_class_name": "UNet2DConditionModel", "_diffusers_version": "0.30.0", "sample_size": 64,
             "cross_attention_dim": 768},
    "text_encoder": {"model_type": "clip_text_model", "hidden_size": 768, "projection_dim": 768,
                     "torch_dtype": "float16"},
    "vae": {"latent_channels": 4},
}


def multi_digest(components):
    configs = {}
    for name, cfg in components.items():
        if name in ("vae", "vae_encoder", "vae_decoder"):
            continue
        configs[name] = {k: v for k, v in cfg.items() if k not in CACHE_WHITE_LIST and k != "neuron"}
    model_type = "stable-diffusion" if "unet" in configs else "diffusion-transformer"
    arch = {"model_type": model_type, "configs": configs}
    return hashlib.sha256(json.dumps(arch, sort_keys=True).encode("utf-8")).hexdigest()


def entry_file(model_id, task, config_dict, neuron, generation):
    """A registry file as the given optimum generation wrote it, and its name."""
    d = dict(config_dict)
    d["neuron"] = neuron
    if generation == "0.0.18":  # json.dumps(config): insertion order, no "_" keys
        text = json.dumps(d)
    elif generation == "0.0.25":  # sort_keys, compact
        text = json.dumps(d, sort_keys=True)
    else:  # 0.2+: indent=2 and the "_" keys
        d.update({"_entry_class": "SingleModelCacheEntry", "_model_id": model_id, "_task": task})
        text = json.dumps(d, indent=2, sort_keys=True)
    return text, hashlib.sha512(text.encode("utf-8")).hexdigest()[:20]


def registries():
    """One entry of acme/old-llama per optimum generation, at the path it used."""
    config = from_pretrained(json.dumps(hub_llama))
    diff = optimum_config(config)
    neuron = {"task": "text-generation", "batch_size": 1, "num_cores": 2, "auto_cast_type": "bf16",
              "sequence_length": 512, "compiler_version": "2.12.54.0+f631c2365", "checkpoint_id": "acme/old-llama"}
    out = []
    for generation, root, layout in (
            ("0.0.18", "neuronxcc-2.12.54.0+f631c2365/0_REGISTRY/0.0.18", "alias"),
            ("0.0.25", "neuronxcc-2.14.227.0+2d4f85be/0_REGISTRY/0.0.25/inference", "alias"),
            ("0.4.4", "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.4", "alias"),
            ("0.4.5", "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5", "digest")):
        # 0.0.18 - 0.0.20 stored config.json minus a few keys; later the cleaned diff dict.
        if generation == "0.0.18":
            stored = {k: v for k, v in hub_llama.items()
                      if k not in ("_name_or_path", "transformers_version", "neuron")}
        else:
            stored = diff
        text, name = entry_file("acme/old-llama", "text-generation", stored, neuron, generation)
        if layout == "alias":
            path = f"{root}/llama/acme/old-llama/{name}.json"
        else:
            path = f"{root}/{arch_digest('llama', 'text-generation', diff)}/{name}.json"
        out.append({"generation": generation, "path": path, "content": text})
    return out


# A VLM whose text_config carries keys at LlamaConfig's own defaults that differ from
# PretrainedConfig's (tie_word_embeddings, bos/eos): recursive_diff_dict drops them.
vlm_class_defaults = copy.deepcopy(vlm)
vlm_class_defaults["text_config"].update({"tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
                                          "use_cache": True, "rope_theta": 10000.0, "is_decoder": False,
                                          "_name_or_path": "lmsys/vicuna-7b-v1.5"})
vlm_class_defaults["vision_config"]["_name_or_path"] = ""


# Base-class edge cases (PretrainedConfig itself).
edge_cases = {
    # transformers sets it through the _attn_implementation property: never serialized.
    "attn-implementation-key": dict(hub_llama, _attn_implementation="flash_attention_2"),
    # label2id stays None when only id2label is given (None != the default map: kept).
    "id2label-without-label2id": {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
                                  "id2label": {"0": "NEG", "1": "POS"}},
    # Python's False == 0: a bool where the base default is an int is dropped.
    "bool-for-int": dict(hub_llama, chunk_size_feed_forward=False, num_beams=True, top_k=50.0),
    # pruned_heads keys become ints (from_dict) and sort as numbers.
    "pruned-heads-12-layers": {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
                               "pruned_heads": {str(i): [0] for i in range(12)}},
    # A type outside the class table, as transformers 4.57 saves it.
    "unknown-type-saved-by-4.57": {"model_type": "olmo2", "hidden_size": 64, "tie_word_embeddings": False,
                                   "architectures": ["Olmo2ForCausalLM"], "dtype": "float32",
                                   "transformers_version": "4.57.1"},
}


def real_configs(directory):
    """configs/*.json: (name, config text), the file's bytes as published."""
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                yield name[:-len(".json")], f.read()


def tasks_of(config):
    model_type = config.get("model_type")
    if model_type in ("gemma3", "idefics3", "llava", "llama4"):
        return ["image-text-to-text", "text-generation"]
    if model_type == "qwen3" and "Qwen3Model" in (config.get("architectures") or []):
        return ["feature-extraction"]
    if model_type == "bert":
        return ["feature-extraction"]
    if model_type == "t5":
        return ["text2text-generation"]
    return ["text-generation"]


def variants(name, text):
    """The published file, a fine-tune of it (same architecture, other id) and a local copy."""
    config = json.loads(text)
    yield name, text
    finetune = dict(config, _name_or_path=f"someone/{name}-finetuned")
    yield f"{name}+finetune", json.dumps(finetune, indent=2)
    local = dict(config, _name_or_path=f"/home/me/models/{name}")
    yield f"{name}+local", json.dumps(local, indent=2)


def main():
    parser = argparse.ArgumentParser(description="arch-digest parity vectors")
    parser.add_argument("--transformers-git", required=True)
    parser.add_argument("--revision", default=transformers_source.PINNED_REVISION)
    options = parser.parse_args()
    transformers_source.install(options.transformers_git, options.revision)
    from transformers.configuration_utils import PretrainedConfig

    vectors = [
        vector("hub-llama-with-default-keys", json.dumps(hub_llama), "text-generation"),
        vector("hub-llama-as-4.57-saves-it", json.dumps(saved_llama), "text-generation"),
        vector("finetuned-copy", json.dumps(finetuned_llama), "text-generation"),
        vector("local-directory", json.dumps(local_llama), "text-generation"),
        vector("vlm-text-generation", json.dumps(vlm), "text-generation"),
        vector("vlm-image-text-to-text", json.dumps(vlm), "image-text-to-text"),
        vector("vlm-text-config-class-defaults", json.dumps(vlm_class_defaults), "image-text-to-text"),
    ]
    for name, config in others.items():
        for task in (["text-classification"] if name.startswith("bert") else tasks_of(config)):
            vectors.append(vector(name if task == tasks_of(config)[0] else f"{name} {task}", json.dumps(config), task))
    for name, config in edge_cases.items():
        vectors.append(vector(f"edge:{name}", json.dumps(config), "text-generation"))
    real = []
    here = os.path.dirname(os.path.abspath(__file__))
    for name, text in real_configs(os.path.join(here, "configs")):
        for variant, variant_text in variants(name, text):
            for task in tasks_of(json.loads(text)):
                real.append(vector(variant, variant_text, task))
    base = PretrainedConfig().to_dict()
    json.dump({
        "transformers_version": TRANSFORMERS_VERSION,
        "transformers_revision": options.revision,
        "base_defaults": json.dumps({k: v for k, v in base.items()
                                     if k not in ("model_type", "transformers_version")}, sort_keys=True),
        "single": vectors,
        "public": real,
        "multi": [{"name": "stable-diffusion-tree", "components": json.dumps(sd_components),
                   "arch_digest": multi_digest(sd_components)}],
        "registries": registries(),
    }, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
