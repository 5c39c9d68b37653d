"""Meet users in their tools: the hub layout, torch models in, ONNX and TransformerLens out.

One module per format:

* :mod:`.hub` — ``save_pretrained(model, dir)`` / ``from_pretrained(dir)``: config.json +
  model.safetensors for every model kind (plain, compiled, hand-built, trained);
* :mod:`.runs` — ``TrainedRun(model, config)`` and ``load_run(run_dir)``: a trained model of
  any registered kind (transformer, rnn, lstm, …) rebuilt from its RunConfig;
* :mod:`.torch_in` — ``load_sequential(weights, layers_json)``: a saved ``nn.Sequential`` of
  Linear/ReLU/``Maxout`` (plain state dict in ``.pt`` or ``.safetensors``) for ``compile`` and
  ``regions``;
* :mod:`.region_models` — ``region_model(path, compile_it, layers)``: any model file the
  region counters take (torch weights, our ``.safetensors``, a JSON network spec), for
  ``regions``;
* :mod:`.onnx_export` — ``export_onnx(model, path)`` and ``check_onnx`` (onnxruntime; extra
  ``expressivity[onnx]``);
* :mod:`.transformer_lens` — ``to_transformer_lens(model)`` (TransformerLens 4.x
  ``TransformerBridge``; extra ``expressivity[tl]``).

The optional formats import their packages only when called, and a missing package is a
one-line error naming the extra to install.
"""

from ..lazy import lazy_names

_WHERE = {  # each public name -> its submodule, imported on first use (lazy_names): reading .options
    # (the command line's option specs, at its start-up) imports no torch
    **dict.fromkeys(("from_pretrained", "is_hub_dir", "load_any", "model_kind", "read_config", "save_pretrained",
                     "transformer_of"), "hub"),
    "check_onnx": "onnx_export", "export_onnx": "onnx_export", "region_model": "region_models",
    "TrainedRun": "runs", "load_run": "runs",
    **dict.fromkeys(("Maxout", "load_network", "load_sequential", "network_of", "save_sequential"), "torch_in"),
    "TLExport": "transformer_lens", "to_transformer_lens": "transformer_lens",
}

__all__ = [
    "Maxout",
    "TLExport",
    "TrainedRun",
    "check_onnx",
    "export_onnx",
    "load_network",
    "load_run",
    "to_transformer_lens",
    "from_pretrained",
    "is_hub_dir",
    "load_any",
    "load_sequential",
    "model_kind",
    "network_of",
    "read_config",
    "region_model",
    "save_pretrained",
    "save_sequential",
    "transformer_of",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE)
