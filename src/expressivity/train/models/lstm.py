"""LSTM baseline: embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear.

Hochreiter & Schmidhuber (1997) with torch's gate equations (i, f, g, o gates; c_t = f ⊙ c_{t−1}
+ i ⊙ g, h_t = o ⊙ tanh c_t). The read-out is linear on h_t (no ReLU: kept as it was, so saved
LSTM runs load and reproduce).
"""

from __future__ import annotations

from torch import Tensor, nn

from ._recurrent import lstm_layers, vmapped


class LSTMModel(nn.Module):
    """Embedding → torch.nn.LSTM (``layers`` stacked, hidden = d_model) → linear read-out."""

    def __init__(self, d_vocab: int, d_model: int, layers: int, d_out: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=layers, batch_first=True)
        self.unembed = nn.Linear(d_model, d_out)

    def forward(self, inputs: Tensor, key_mask: Tensor | None = None) -> Tensor:
        x = self.embed(inputs)
        h = lstm_layers(self.lstm, x) if vmapped(x) else self.lstm(x)[0]  # (B, T, d_model)
        return self.unembed(h)  # (B, T, d_out)
