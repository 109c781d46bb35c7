#!/usr/bin/env python3
"""Generates the arch-digest parity vectors ONCE: what optimum-neuron >= 0.4.5 files an
entry under, sha256(json.dumps({"model_type", "task", "config"}, sort_keys=True)), where
`config` is transformers' `AutoConfig.from_pretrained(...).to_diff_dict()` minus optimum's
CACHE_WHITE_LIST (optimum/neuron/cache/entries/single_model.py, cache_entry.py).

transformers cannot be installed here (no PyPI), so this script re-states the parts of it
that decide the result, the way transformers 4.57.1 (the version optimum-neuron main pins,
`transformers~=4.57.1`) structures them: a PretrainedConfig base class whose __init__ pops
its own arguments and the generation parameters and keeps every other key as an attribute;
to_dict() (model_type, transformers_version, _remove_keys_not_serialized, dtype as a
string); to_diff_dict() comparing with PretrainedConfig().to_dict() and with the model
class's own cls().to_dict(); recursive_diff_dict() for sub-configs; and the __init__ of
the model config classes the cache holds most (llama, mistral, mixtral, qwen2, granite,
gpt2, bert, t5), with the attributes they derive. Read from transformers'
src/transformers/configuration_utils.py and models/<type>/configuration_<type>.py.

Provenance (read through the public-code index, 2026-11; transformers' own main is v5 by now):
  configuration_utils.py - PretrainedConfig.__init__, _get_global_generation_defaults, to_dict,
    to_diff_dict, recursive_diff_dict, _remove_keys_not_serialized, dict_dtype_to_str,
    get_text_config, from_dict: a 4.56-4.57 file (dtype argument beside torchscript and
    pruned_heads, which v5 dropped); index file id 245946005, whose repository and commit
    the index does not expose.
  models/llama/configuration_llama.py - cyyever/transformers 2e772de3866593743c80cb7a0b5bb1cb6eb5820b
    (pre-v5: rope_scaling + rope_config_validation); swiss-ai/transformers
    83c688d3a6926dbdaaabdc6711acb71d6faa7335 is identical.
  models/qwen2/configuration_qwen2.py - cyyever/transformers 2e772de3866593743c80cb7a0b5bb1cb6eb5820b (pre-v5).
  models/mistral/configuration_mistral.py - feisenyu/transformers_4573 9c66b2210393d4bb7421896e6456d58fc369dfbf
    (v5-dev rope_parameters form: every other default as here; rope_theta 10000.0 from 4.5x).
  models/granite/configuration_granite.py - nishu-opsera/transformers-main 2b6079d76303a4157b1f3f104a45a7f89eae3d43
    (v5 dataclass form; the same defaults, rope_theta 10000.0 from 4.5x).
  models/mixtral/configuration_mixtral.py, models/t5/configuration_t5.py, models/gpt2/configuration_gpt2.py,
    models/bert/configuration_bert.py - duyy97/transformers ebebfbf58043b749f47a2f701a161f0c12e5f107 (a 4.4x-era
    fork); mixtral and granite also from zxy9657/transformers 1ff28dc623dbf2d41b68bd12db96fa3707829c03
    (setup.py 4.52.0.dev0): MixtralConfig stores head_dim as given (None, as in v5 too), and
    GraniteConfig has no rope_scaling "type" -> "rope_type" copy.
  optimum-neuron cache/entries/cache_entry.py 1ca0561b21e3d26696c7fac56c409f599c3e657c (CACHE_WHITE_LIST,
    14 keys with return_dict) and single_model.py 12817f200b34bd64415710d7bcefea50e5800b3e (to_diff_dict, the
    whitelist, get_text_config for text-generation), huggingface/optimum-neuron.

It is a class-based emulation, independent of the C++ one (registry/src/config_diff.cpp,
table-based): the doctest compares them. The C++ tests never run Python.
Regenerate with:
  python3 tests/data/registry/generate_diff_vectors.py > tests/data/registry/diff_vectors.json
"""
import copy
import hashlib
import json
import sys

TRANSFORMERS_VERSION = "4.57.1"

# optimum-neuron main, cache_entry.py
CACHE_WHITE_LIST = [
    "_name_or_path", "transformers_version", "_diffusers_version", "eos_token_id", "bos_token_id",
    "pad_token_id", "torchscript", "torch_dtype", "_commit_hash", "sample_size", "projection_dim",
    "_use_default_values", "_attn_implementation_autoset", "return_dict",
]

GENERATION_DEFAULTS = {
    "max_length": 20, "min_length": 0, "do_sample": False, "early_stopping": False, "num_beams": 1,
    "num_beam_groups": 1, "diversity_penalty": 0.0, "temperature": 1.0, "top_k": 50, "top_p": 1.0,
    "typical_p": 1.0, "repetition_penalty": 1.0, "length_penalty": 1.0, "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0, "bad_words_ids": None, "num_return_sequences": 1,
    "output_scores": False, "return_dict_in_generate": False, "forced_bos_token_id": None,
    "forced_eos_token_id": None, "remove_invalid_values": False, "exponential_decay_length_penalty": None,
    "suppress_tokens": None, "begin_suppress_tokens": None,
}


class PretrainedConfig:
    model_type = ""
    sub_configs = {}
    has_no_defaults_at_init = False
    attribute_map = {}

    def __setattr__(self, key, value):
        # attribute_map: a config.json key such as T5's "hidden_size" lands on "d_model".
        super().__setattr__(type(self).attribute_map.get(key, key), value)

    def __init__(self, *, output_hidden_states=False, output_attentions=False, return_dict=True,
                 torchscript=False, dtype=None, pruned_heads=None, tie_word_embeddings=True,
                 chunk_size_feed_forward=0, is_encoder_decoder=False, is_decoder=False,
                 cross_attention_hidden_size=None, add_cross_attention=False, tie_encoder_decoder=False,
                 architectures=None, finetuning_task=None, id2label=None, label2id=None, num_labels=None,
                 task_specific_params=None, problem_type=None, tokenizer_class=None, prefix=None,
                 bos_token_id=None, pad_token_id=None, eos_token_id=None, sep_token_id=None,
                 decoder_start_token_id=None, **kwargs):
        torch_dtype = kwargs.pop("torch_dtype", None)
        if torch_dtype is not None:
            dtype = dtype if dtype is not None else torch_dtype
        self.return_dict = return_dict
        self.output_hidden_states = output_hidden_states
        self.torchscript = torchscript
        self.dtype = dtype  # a string here; transformers holds a torch.dtype and writes its name back
        self._output_attentions = output_attentions
        self.pruned_heads = pruned_heads if pruned_heads is not None else {}
        self.tie_word_embeddings = tie_word_embeddings
        self.chunk_size_feed_forward = chunk_size_feed_forward
        self.is_encoder_decoder = is_encoder_decoder
        self.is_decoder = is_decoder
        self.cross_attention_hidden_size = cross_attention_hidden_size
        self.add_cross_attention = add_cross_attention
        self.tie_encoder_decoder = tie_encoder_decoder
        self.architectures = architectures
        self.finetuning_task = finetuning_task
        self.id2label = id2label
        self.label2id = label2id
        self.task_specific_params = task_specific_params
        self.problem_type = problem_type
        if self.id2label is None:
            n = num_labels if num_labels is not None else 2
            self.id2label = {i: f"LABEL_{i}" for i in range(n)}
            self.label2id = dict(zip(self.id2label.values(), self.id2label.keys()))
        else:
            self.id2label = {int(k): v for k, v in self.id2label.items()}
        self.tokenizer_class = tokenizer_class
        self.prefix = prefix
        self.bos_token_id = bos_token_id
        self.pad_token_id = pad_token_id
        self.eos_token_id = eos_token_id
        self.sep_token_id = sep_token_id
        self.decoder_start_token_id = decoder_start_token_id
        for name, default in GENERATION_DEFAULTS.items():
            setattr(self, name, kwargs.pop(name, default))
        self._name_or_path = str(kwargs.pop("name_or_path", ""))
        self._commit_hash = kwargs.pop("_commit_hash", None)
        self._attn_implementation_internal = kwargs.pop("attn_implementation", None)
        self.transformers_version = kwargs.pop("transformers_version", None)
        for key, value in kwargs.items():
            setattr(self, key, value)
        self.tf_legacy_loss = kwargs.pop("tf_legacy_loss", False)
        self.use_bfloat16 = kwargs.pop("use_bfloat16", False)

    @staticmethod
    def _remove_keys_not_serialized(d):
        d.pop("_auto_class", None)
        if "_output_attentions" in d:
            d["output_attentions"] = d.pop("_output_attentions")
        d.pop("_commit_hash", None)
        d.pop("_attn_implementation_internal", None)
        d.pop("base_model_tp_plan", None)
        d.pop("base_model_pp_plan", None)
        for value in d.values():
            if isinstance(value, dict):
                PretrainedConfig._remove_keys_not_serialized(value)

    def to_dict(self):
        output = copy.deepcopy({k: v for k, v in self.__dict__.items() if not isinstance(v, PretrainedConfig)})
        for key, value in self.__dict__.items():
            if isinstance(value, PretrainedConfig):
                value = value.to_dict()
                del value["transformers_version"]
                output[key] = value
        output["model_type"] = self.__class__.model_type
        output["transformers_version"] = TRANSFORMERS_VERSION
        self._remove_keys_not_serialized(output)
        return output

    def to_diff_dict(self):
        config_dict = self.to_dict()
        default_config_dict = PretrainedConfig().to_dict()
        class_config_dict = self.__class__().to_dict() if not self.has_no_defaults_at_init else {}
        serializable = {}
        for key, value in config_dict.items():
            if (isinstance(getattr(self, key, None), PretrainedConfig) and key in class_config_dict
                    and isinstance(class_config_dict[key], dict)) or key in self.sub_configs:
                diff = recursive_diff_dict(value, default_config_dict, config_obj=getattr(self, key, None))
                if "model_type" in value:
                    diff["model_type"] = value["model_type"]
                serializable[key] = diff
            elif (key not in default_config_dict or key == "transformers_version" or key == "vocab_file"
                  or value != default_config_dict[key]
                  or (key in default_config_dict and value != class_config_dict.get(key, value))):
                serializable[key] = value
        self._remove_keys_not_serialized(serializable)
        serializable.pop("_name_or_path", None)
        return serializable

    def get_text_config(self):
        return getattr(self, "text_config", self)


def recursive_diff_dict(dict_a, dict_b, config_obj=None):
    # A key of PretrainedConfig's defaults (dict_b) stays only when it differs from the
    # sub-config class's own default; the base default itself is not compared.
    diff = {}
    default = config_obj.__class__().to_dict() if config_obj is not None else {}
    for key, value in dict_a.items():
        obj_value = getattr(config_obj, str(key), None)
        if isinstance(obj_value, PretrainedConfig) and key in dict_b and isinstance(dict_b[key], dict):
            diff[key] = recursive_diff_dict(value, dict_b[key], config_obj=obj_value)
        elif key not in dict_b or value != default[key]:
            diff[key] = value
    return diff


class LlamaConfig(PretrainedConfig):
    model_type = "llama"

    def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=None, hidden_act="silu", max_position_embeddings=2048,
                 initializer_range=0.02, rms_norm_eps=1e-6, use_cache=True, pad_token_id=None, bos_token_id=1,
                 eos_token_id=2, pretraining_tp=1, tie_word_embeddings=False, rope_theta=10000.0,
                 rope_scaling=None, attention_bias=False, attention_dropout=0.0, mlp_bias=False, head_dim=None,
                 **kwargs):
        self.vocab_size = vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.rms_norm_eps = rms_norm_eps
        self.pretraining_tp = pretraining_tp
        self.use_cache = use_cache
        self.rope_theta = rope_theta
        self.rope_scaling = rope_scaling
        self.attention_bias = attention_bias
        self.attention_dropout = attention_dropout
        self.mlp_bias = mlp_bias
        self.head_dim = head_dim if head_dim is not None else self.hidden_size // self.num_attention_heads
        if self.rope_scaling is not None and "type" in self.rope_scaling:
            self.rope_scaling["rope_type"] = self.rope_scaling["type"]
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id,
                         tie_word_embeddings=tie_word_embeddings, **kwargs)


class MistralConfig(PretrainedConfig):
    model_type = "mistral"

    def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, head_dim=None, hidden_act="silu",
                 max_position_embeddings=4096 * 32, initializer_range=0.02, rms_norm_eps=1e-6, use_cache=True,
                 pad_token_id=None, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, rope_theta=10000.0,
                 sliding_window=4096, attention_dropout=0.0, **kwargs):
        self.vocab_size = vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.sliding_window = sliding_window
        self.head_dim = head_dim if head_dim is not None else hidden_size // num_attention_heads
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.rms_norm_eps = rms_norm_eps
        self.use_cache = use_cache
        self.rope_theta = rope_theta
        self.attention_dropout = attention_dropout
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id,
                         tie_word_embeddings=tie_word_embeddings, **kwargs)


class MixtralConfig(PretrainedConfig):
    model_type = "mixtral"

    def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, head_dim=None, hidden_act="silu",
                 max_position_embeddings=4096 * 32, initializer_range=0.02, rms_norm_eps=1e-5, use_cache=True,
                 pad_token_id=None, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, rope_theta=1e6,
                 sliding_window=None, attention_dropout=0.0, num_experts_per_tok=2, num_local_experts=8,
                 output_router_logits=False, router_aux_loss_coef=0.001, router_jitter_noise=0.0, **kwargs):
        self.vocab_size = vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.sliding_window = sliding_window
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.rms_norm_eps = rms_norm_eps
        self.use_cache = use_cache
        self.rope_theta = rope_theta
        self.attention_dropout = attention_dropout
        self.head_dim = head_dim  # MixtralConfig keeps it as given (None): no hidden_size // heads
        self.num_experts_per_tok = num_experts_per_tok
        self.num_local_experts = num_local_experts
        self.output_router_logits = output_router_logits
        self.router_aux_loss_coef = router_aux_loss_coef
        self.router_jitter_noise = router_jitter_noise
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id,
                         tie_word_embeddings=tie_word_embeddings, **kwargs)


class Qwen2Config(PretrainedConfig):
    model_type = "qwen2"

    def __init__(self, vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=32, hidden_act="silu", max_position_embeddings=32768,
                 initializer_range=0.02, rms_norm_eps=1e-6, use_cache=True, tie_word_embeddings=False,
                 rope_theta=10000.0, rope_scaling=None, use_sliding_window=False, sliding_window=4096,
                 max_window_layers=28, layer_types=None, attention_dropout=0.0, **kwargs):
        self.vocab_size = vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.use_sliding_window = use_sliding_window
        self.sliding_window = sliding_window if self.use_sliding_window else None
        self.max_window_layers = max_window_layers
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.rms_norm_eps = rms_norm_eps
        self.use_cache = use_cache
        self.rope_theta = rope_theta
        self.rope_scaling = rope_scaling
        self.attention_dropout = attention_dropout
        if self.rope_scaling is not None and "type" in self.rope_scaling:
            self.rope_scaling["rope_type"] = self.rope_scaling["type"]
        self.layer_types = layer_types
        if self.layer_types is None:
            self.layer_types = [
                "sliding_attention" if self.sliding_window is not None and i >= self.max_window_layers
                else "full_attention" for i in range(self.num_hidden_layers)
            ]
        super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)


class GraniteConfig(PretrainedConfig):
    model_type = "granite"

    def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=None, hidden_act="silu", max_position_embeddings=2048,
                 initializer_range=0.02, rms_norm_eps=1e-6, use_cache=True, pad_token_id=None, bos_token_id=1,
                 eos_token_id=2, tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None,
                 attention_bias=False, attention_dropout=0.0, mlp_bias=False, embedding_multiplier=1.0,
                 logits_scaling=1.0, residual_multiplier=1.0, attention_multiplier=1.0, **kwargs):
        self.vocab_size = vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.num_key_value_heads = num_attention_heads if num_key_value_heads is None else num_key_value_heads
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.rms_norm_eps = rms_norm_eps
        self.use_cache = use_cache
        self.rope_theta = rope_theta
        self.rope_scaling = rope_scaling
        self.attention_bias = attention_bias
        self.attention_dropout = attention_dropout
        self.mlp_bias = mlp_bias
        self.embedding_multiplier = embedding_multiplier
        self.logits_scaling = logits_scaling
        self.residual_multiplier = residual_multiplier
        self.attention_multiplier = attention_multiplier
        # No "type" -> "rope_type" copy here (LlamaConfig and Qwen2Config have it, GraniteConfig not).
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id,
                         tie_word_embeddings=tie_word_embeddings, **kwargs)


class GPT2Config(PretrainedConfig):
    model_type = "gpt2"
    attribute_map = {"hidden_size": "n_embd", "max_position_embeddings": "n_positions",
                     "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"}

    def __init__(self, vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=None,
                 activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
                 layer_norm_epsilon=1e-5, initializer_range=0.02, summary_type="cls_index", summary_use_proj=True,
                 summary_activation=None, summary_proj_to_labels=True, summary_first_dropout=0.1,
                 scale_attn_weights=True, use_cache=True, bos_token_id=50256, eos_token_id=50256,
                 scale_attn_by_inverse_layer_idx=False, reorder_and_upcast_attn=False, **kwargs):
        self.vocab_size = vocab_size
        self.n_positions = n_positions
        self.n_embd = n_embd
        self.n_layer = n_layer
        self.n_head = n_head
        self.n_inner = n_inner
        self.activation_function = activation_function
        self.resid_pdrop = resid_pdrop
        self.embd_pdrop = embd_pdrop
        self.attn_pdrop = attn_pdrop
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.summary_type = summary_type
        self.summary_use_proj = summary_use_proj
        self.summary_activation = summary_activation
        self.summary_first_dropout = summary_first_dropout
        self.summary_proj_to_labels = summary_proj_to_labels
        self.scale_attn_weights = scale_attn_weights
        self.use_cache = use_cache
        self.scale_attn_by_inverse_layer_idx = scale_attn_by_inverse_layer_idx
        self.reorder_and_upcast_attn = reorder_and_upcast_attn
        self.bos_token_id = bos_token_id
        self.eos_token_id = eos_token_id
        super().__init__(bos_token_id=bos_token_id, eos_token_id=eos_token_id, **kwargs)


class BertConfig(PretrainedConfig):
    model_type = "bert"

    def __init__(self, vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
                 initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0, position_embedding_type="absolute",
                 use_cache=True, classifier_dropout=None, **kwargs):
        super().__init__(pad_token_id=pad_token_id, **kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.hidden_act = hidden_act
        self.intermediate_size = intermediate_size
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.position_embedding_type = position_embedding_type
        self.use_cache = use_cache
        self.classifier_dropout = classifier_dropout


class T5Config(PretrainedConfig):
    model_type = "t5"
    attribute_map = {"hidden_size": "d_model", "num_attention_heads": "num_heads", "num_hidden_layers": "num_layers"}

    def __init__(self, vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=None,
                 num_heads=8, relative_attention_num_buckets=32, relative_attention_max_distance=128,
                 dropout_rate=0.1, layer_norm_epsilon=1e-6, initializer_factor=1.0, feed_forward_proj="relu",
                 is_encoder_decoder=True, use_cache=True, pad_token_id=0, eos_token_id=1, classifier_dropout=0.0,
                 **kwargs):
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.d_kv = d_kv
        self.d_ff = d_ff
        self.num_layers = num_layers
        self.num_decoder_layers = num_decoder_layers if num_decoder_layers is not None else self.num_layers
        self.num_heads = num_heads
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.relative_attention_max_distance = relative_attention_max_distance
        self.dropout_rate = dropout_rate
        self.classifier_dropout = classifier_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_factor = initializer_factor
        self.feed_forward_proj = feed_forward_proj
        self.use_cache = use_cache
        act_info = self.feed_forward_proj.split("-")
        self.dense_act_fn = act_info[-1]
        self.is_gated_act = act_info[0] == "gated"
        if feed_forward_proj == "gated-gelu":
            self.dense_act_fn = "gelu_new"
        super().__init__(pad_token_id=pad_token_id, eos_token_id=eos_token_id, is_encoder_decoder=is_encoder_decoder,
                         **kwargs)


CONFIG_MAPPING = {cls.model_type: cls for cls in (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config,
                                                   GraniteConfig, GPT2Config, BertConfig, T5Config)}


def generic_class(model_type, sub_config_keys=()):
    """A config class transformers would have but this script does not re-state: no own
    attributes (vectors using it carry all of them in config.json), sub-configs by type."""
    class Generic(PretrainedConfig):
        sub_configs = {key: PretrainedConfig for key in sub_config_keys}

        def __init__(self, **kwargs):
            for key in sub_config_keys:
                value = kwargs.pop(key, None)
                if isinstance(value, dict):
                    value = config_class(value.get("model_type", ""))(**value)
                elif value is None:
                    value = PretrainedConfig()
                setattr(self, key, value)
            super().__init__(**kwargs)
    Generic.model_type = model_type
    return Generic


def config_class(model_type, sub_config_keys=()):
    return CONFIG_MAPPING.get(model_type) or generic_class(model_type, sub_config_keys)


def from_pretrained(config_json):
    """AutoConfig.from_pretrained on a config.json text: its dict, name_or_path-free."""
    config_dict = json.loads(config_json)
    sub_keys = tuple(k for k, v in config_dict.items() if isinstance(v, dict) and "model_type" in v)
    cls = config_class(config_dict.get("model_type", ""), sub_keys)
    config_dict["attn_implementation"] = None
    return cls(**config_dict)


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
    "granite-rope-type": {"model_type": "granite", "hidden_size": 128, "num_attention_heads": 4,
                          "num_hidden_layers": 2, "rope_scaling": {"type": "linear", "factor": 2.0}},
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
    "unknown-type": {"model_type": "phi3", "hidden_size": 64, "return_dict": True, "tie_word_embeddings": True,
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


def main():
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
        task = "text-classification" if name.startswith("bert") else (
            "text2text-generation" if name == "t5" else "text-generation")
        vectors.append(vector(name, json.dumps(config), task))
    json.dump({
        "transformers_version": TRANSFORMERS_VERSION,
        "base_defaults": json.dumps({k: v for k, v in PretrainedConfig().to_dict().items()
                                     if k not in ("model_type", "transformers_version", "_name_or_path")},
                                    sort_keys=True),
        "single": vectors,
        "multi": [{"name": "stable-diffusion-tree", "components": json.dumps(sd_components),
                   "arch_digest": multi_digest(sd_components)}],
        "registries": registries(),
    }, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
