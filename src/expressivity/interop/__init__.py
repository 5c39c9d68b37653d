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

from .hub import (
    from_pretrained,
    is_hub_dir,
    load_any,
    model_kind,
    read_config,
    save_pretrained,
    transformer_of,
)
from .onnx_export import check_onnx, export_onnx
from .region_models import region_model
from .runs import TrainedRun, load_run
from .torch_in import Maxout, load_network, load_sequential, network_of, save_sequential
from .transformer_lens import TLExport, to_transformer_lens

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
