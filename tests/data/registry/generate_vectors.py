#!/usr/bin/env python3
"""Generates the registry serialization test vectors ONCE with CPython's json module.

The C++ tests read vectors.json and never run Python. Each vector keeps its input as
JSON *text* so the C++ side parses the very same bytes (1.0 stays a float, 1 an int).
Regenerate with: python3 tests/data/registry/generate_vectors.py > tests/data/registry/vectors.json
"""
import hashlib
import json
import random
import sys

CACHE_WHITE_LIST = [
    "_name_or_path", "transformers_version", "_diffusers_version", "eos_token_id", "bos_token_id",
    "pad_token_id", "torchscript", "torch_dtype", "_commit_hash", "sample_size", "projection_dim",
    "_use_default_values", "_attn_implementation_autoset", "return_dict",
]

serialization_inputs = {
    "scalars": '{"b": true, "a": false, "n": null, "i": 0, "neg": -17, "s": "text"}',
    "floats": '{"tiny": 1e-05, "ten_k": 10000.0, "tenth": 0.1, "big": 1e16, "big_minus": 1e15, '
              '"negzero": -0.0, "one": 1.0, "third": 0.3333333333333333, "small": 0.0001, "smaller": 0.00012345, '
              '"huge": 1.7976931348623157e308, "denorm": 5e-324, "exp": 1.5e+300, "neg_exp": -2.5e-7, '
              '"round": 123456789012345680.0, "pi": 3.141592653589793, "rope": 500000.0, "eps": 1e-06}',
    "big_ints": '{"max_u64": 18446744073709551615, "max_i64": 9223372036854775807, "min_i64": -9223372036854775808, '
                '"two_63": 9223372036854775808}',
    "unicode": '{"greek": "\\u03b1\\u03b2\\u03b3", "emoji": "\\ud83d\\ude80 rocket", "cjk": "\\u6a21\\u578b", '
               '"accent": "caf\\u00e9", "ctrl": "tab\\tnl\\nquote\\"back\\\\slash\\u0001\\u001f\\u007f\\b\\f\\r", '
               '"slash": "a/b", "bmp_edge": "\\uffff\\ue000"}',
    "key_sorting": '{"z": 1, "a": 2, "\\u00e9": 3, "e": 4, "\\ud83d\\ude80": 5, "\\u03b1": 6, "A": 7, "_x": 8, '
                   '"\\uff41": 9, "aa": 10, "a_": 11, "a-": 12}',
    "empties": '{"d": {}, "l": [], "nested": {"x": [{}, [], [[]], {"y": {}}]}, "s": ""}',
    "top_list": '[1, [2, [3, {"k": []}]], {"b": 1, "a": [true, null]}]',
    "empty_object": '{}',
    "scalar_top": '"just a string \\u00e9"',
}

llama_config = {
    "_name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
    "architectures": ["LlamaForCausalLM"],
    "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.43.0.dev0", "use_cache": True, "vocab_size": 128256,
}
llama_neuron = {
    "_serialized_key": "NxDNeuronConfig", "batch_size": 4, "capacity_factor": None,
    "checkpoint_id": "meta-llama/Llama-3.1-8B-Instruct",
    "checkpoint_revision": "0e9e39f249a16976918f6564b8830bc894c89659",
    "continuous_batching": True, "ep_degree": 1, "fused_qkv": True, "glu_mlp": True,
    "local_ranks_size": 8, "max_batch_size": 4, "max_context_length": 4096, "max_topk": 256,
    "n_active_tokens": 4096, "neuronxcc_version": "2.21.33363.0+82129205",
    "on_device_sampling": True, "optimum_neuron_version": "0.4.5", "output_logits": False,
    "pp_degree": 1, "prefill_chunk_size": 0, "sequence_length": 4096, "speculation_length": 0,
    "start_rank_id": 0, "target": "trn1", "torch_dtype": "bfloat16", "tp_degree": 8,
}
bert_config = {
    "_name_or_path": "bert-base-uncased", "architectures": ["BertForMaskedLM"],
    "attention_probs_dropout_prob": 0.1, "classifier_dropout": None, "gradient_checkpointing": False,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
    "model_type": "bert", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0,
    "position_embedding_type": "absolute", "transformers_version": "4.6.0.dev0", "type_vocab_size": 2,
    "use_cache": True, "vocab_size": 30522,
}
bert_neuron = {
    "auto_cast": "matmul", "auto_cast_type": "bf16", "compiler_type": "neuronx-cc",
    "compiler_version": "2.15.128.0+56dc5a86", "dynamic_batch_size": False, "float_dtype": "fp32",
    "inline_weights_to_neff": True, "int_dtype": "int64", "optlevel": "2",
    "output_attentions": False, "output_hidden_states": False, "static_batch_size": 1,
    "static_sequence_length": 128, "tensor_parallel_size": 1, "task": "fill-mask",
}
unicode_config = {"model_type": "gpt2", "n_embd": 768, "author": "Jos\u00e9 \u6a21\u578b \U0001F680",
                  "\u00e9t\u00e9": 1.0, "z": [], "a": {}}
unicode_neuron = {"batch_size": 1, "sequence_length": 128, "num_cores": 2, "auto_cast_type": "fp16",
                  "note": "\u00fcber"}


def clean(config):
    config = dict(config)
    for key in CACHE_WHITE_LIST:
        config.pop(key, None)
    return config


def single_entry(model_id, task, config, neuron):
    cleaned = clean(config)
    cleaned.pop("neuron", None)
    d = dict(cleaned)
    d["neuron"] = neuron
    d["_entry_class"] = "SingleModelCacheEntry"
    d["_model_id"] = model_id
    d["_task"] = task
    text = json.dumps(d, indent=2, sort_keys=True)
    arch = {"model_type": cleaned["model_type"], "task": task, "config": cleaned}
    return {
        "model_id": model_id, "task": task,
        "config": json.dumps(config), "neuron": json.dumps(neuron),
        "serialized": text,
        "hash": hashlib.sha512(text.encode("utf-8")).hexdigest()[:20],
        "arch_digest": hashlib.sha256(json.dumps(arch, sort_keys=True).encode("utf-8")).hexdigest(),
        "cleaned_config": json.dumps(cleaned, indent=2, sort_keys=True),
    }


def multi_entry(model_id, configs):
    raw = {name: clean(cfg) for name, cfg in configs.items() if name not in ("vae", "vae_encoder", "vae_decoder")}
    cleaned = {}
    for name, cfg in raw.items():
        cfg = json.loads(json.dumps(cfg))
        if "neuron" in cfg:
            for key in ("input_names", "output_names", "model_type"):
                cfg["neuron"].pop(key, None)
        cleaned[name] = cfg
    model_type = "stable-diffusion" if "unet" in cleaned else "diffusion-transformer"
    d = dict(cleaned)
    d["_entry_class"] = "MultiModelCacheEntry"
    d["_model_id"] = model_id
    d["_task"] = None
    text = json.dumps(d, indent=2, sort_keys=True)
    arch_configs = {name: {k: v for k, v in cfg.items() if k != "neuron"} for name, cfg in raw.items()}
    arch = {"model_type": model_type, "configs": arch_configs}
    return {
        "model_id": model_id, "configs": json.dumps(configs), "model_type": model_type,
        "serialized": text,
        "hash": hashlib.sha512(text.encode("utf-8")).hexdigest()[:20],
        "arch_digest": hashlib.sha256(json.dumps(arch, sort_keys=True).encode("utf-8")).hexdigest(),
    }


sd_configs = {
    "unet": {"_class_name": "UNet2DConditionModel", "_diffusers_version": "0.21.0", "sample_size": 64,
             "cross_attention_dim": 768, "block_out_channels": [320, 640, 1280, 1280],
             "neuron": {"static_batch_size": 1, "static_height": 64, "static_width": 64,
                        "input_names": ["sample"], "output_names": ["out"], "model_type": "unet",
                        "auto_cast": "matmul", "auto_cast_type": "bf16", "compiler_version": "2.15.128.0"}},
    "text_encoder": {"model_type": "clip_text_model", "hidden_size": 768, "projection_dim": 768,
                     "layer_norm_eps": 1e-05,
                     "neuron": {"static_batch_size": 1, "static_sequence_length": 77, "model_type": "clip-text"}},
    "vae_decoder": {"_class_name": "AutoencoderKL", "latent_channels": 4},
}

# Many doubles of every magnitude (fixed seed), to pin the shortest-repr algorithm and the
# switch between fixed and exponent notation.
rng = random.Random(20261122)
floats = []
for exponent in range(-320, 309, 3):
    floats.append(rng.uniform(1, 10) * 10.0 ** exponent if exponent > -308 else rng.uniform(1, 10) * 1e-300 * 10.0 ** (exponent + 300))
floats += [rng.choice([-1, 1]) * rng.random() * 10 ** rng.randint(-6, 18) for _ in range(200)]
floats += [float(n) for n in (1, 10, 100, 1e15, 9999999999999998.0, 1e16, 1.5, 0.5, 2.5e-5, 123456.789)]
floats = [f for f in floats if f == f and abs(f) != float("inf")]
serialization_inputs["random_floats"] = json.dumps({"values": floats, "ints": [rng.randint(-2**63, 2**63 - 1) for _ in range(50)]})

vectors = {"serialization": [], "entries": [], "multi_entries": []}
for name, text in serialization_inputs.items():
    value = json.loads(text)
    indent = json.dumps(value, indent=2, sort_keys=True)
    vectors["serialization"].append({
        "name": name, "input": text,
        "indent2": indent,
        "compact": json.dumps(value, sort_keys=True),
        "sha512_20": hashlib.sha512(indent.encode("utf-8")).hexdigest()[:20],
        "sha256_compact": hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest(),
    })
vectors["entries"].append(single_entry("meta-llama/Llama-3.1-8B-Instruct", "text-generation", llama_config, llama_neuron))
vectors["entries"].append(single_entry("bert-base-uncased", "fill-mask", bert_config, bert_neuron))
vectors["entries"].append(single_entry("org/unicode-\u00e9", "text-generation", unicode_config, unicode_neuron))
vectors["multi_entries"].append(multi_entry("stabilityai/sd-turbo", sd_configs))

json.dump(vectors, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
