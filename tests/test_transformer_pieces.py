"""The named pieces of the forward (Block.attn_input/mlp_input, Attention.project/qkv/scores,
length_factor, Transformer.run_blocks/unembed) compose to the forward exactly."""

import pytest
import torch

from expressivity.transformer import Transformer, TransformerConfig


@pytest.mark.parametrize("positional", ["learned", "rope", "alibi", "relative", "none"])
@pytest.mark.parametrize("layer_norm", ["none", "pre", "post"])
@pytest.mark.parametrize("attention", ["softmax", "hardmax"])
def test_pieces_compose_to_the_forward(positional, layer_norm, attention):
    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=6, d_vocab=5, d_out=3,
                            n_ctx=16, positional=positional, layer_norm=layer_norm, attention=attention,
                            causal=True, log_length_scaling=True, dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(seed=1)
    ids = torch.randint(0, 5, (3, 7), generator=torch.Generator().manual_seed(0))
    cache: dict = {}
    with torch.no_grad():
        out = m(ids)  # no cache: the fused (SDPA) path for softmax
        m(ids, cache=cache)  # the explicit path that records the hooks
        y0 = m.embed(ids)
        # run blocks k..L from a residual, then unembed
        y1 = m.blocks[0](y0, None, None, "")
        stream: list = []
        assert torch.equal(m.unembed(m.run_blocks(y1, 1, stream=stream)), out)
        torch.testing.assert_close(stream[-1], cache["blocks.1.hook_resid_post"], rtol=0, atol=1e-12)
        # stop: blocks start+1..stop only, y^(stop) = the next block's resid_pre
        assert torch.equal(m.run_blocks(y0, 0, cache={}, stop=1), cache["blocks.1.hook_resid_pre"])
        assert torch.equal(m.run_blocks(y0, 0, stop=0), y0)
        for k, block in enumerate(m.blocks):
            y = cache[f"blocks.{k}.hook_resid_pre"]
            scores = block.attn.scores(block.attn_input(y))
            if attention == "hardmax":  # the softmax path keeps no scores in the cache
                assert torch.equal(scores, cache[f"blocks.{k}.attn.hook_scores"])
            q, k_, v = block.attn.qkv(block.attn_input(y))
            if positional != "rope":  # qkv without rotation is the plain projection
                p = block.attn.project(block.attn_input(y))
                assert torch.equal(q, p[:, :, 0].transpose(1, 2))
                assert torch.equal(v, p[:, :, 2].transpose(1, 2))
            # the length-scaling rule: λ·log(#keys) per query (causal: i + 1 keys)
            n_keys = torch.arange(1, 8, dtype=torch.float64)[:, None]
            ref = cfg.score_scale * block.attn.length_factor(n_keys) * (q @ k_.transpose(-1, -2))
            a = scores.clone()
            if positional in ("alibi", "relative"):
                a = a - block.attn._positions(7, y.device, y.dtype)[1]
            keep = torch.ones(7, 7, dtype=torch.bool).tril()
            torch.testing.assert_close(a[..., keep], ref[..., keep], rtol=0, atol=1e-12)



@pytest.mark.parametrize("d_head", [1, 4])
@pytest.mark.parametrize("layer_norm", ["none", "pre", "post"])
@pytest.mark.parametrize("log_length_scaling", [False, True])
def test_pair_scores_heads_out_and_after_attention_rebuild_a_block(d_head, layer_norm, log_length_scaling):
    """pair_scores on project's rows equals scores (table positions), and pattern → heads_out →
    after_attention rebuilds the block's output from them."""
    cfg = TransformerConfig(d_model=8, n_layers=1, n_heads=2, d_head=d_head, d_mlp=6, d_vocab=5, d_out=3,
                            n_ctx=16, layer_norm=layer_norm, causal=True, log_length_scaling=log_length_scaling,
                            lam=0.8, dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(seed=2)
    ids = torch.randint(0, 5, (3, 7), generator=torch.Generator().manual_seed(1))
    block = m.blocks[0]
    with torch.no_grad():
        y = m.embed(ids)
        q, k, v = (t.transpose(1, 2) for t in block.attn.project(block.attn_input(y)).unbind(-3))  # (B, H, T, e)
        n_keys = torch.arange(1, 8, dtype=torch.float64)  # causal: query i sees i + 1 keys
        a = block.attn.pair_scores(q, k, n_keys)
        keep = torch.ones(7, 7, dtype=torch.bool).tril()
        ref = block.attn.scores(block.attn_input(y))
        torch.testing.assert_close(a[..., keep], ref[..., keep], rtol=0, atol=1e-12)
        if not log_length_scaling:  # without n_keys the multiplier is 1: λ·q·k
            torch.testing.assert_close(block.attn.pair_scores(q, k, None), a, rtol=0, atol=0)
        z = block.attn.pattern(a.masked_fill(~keep, float("-inf"))) @ v  # (B, H, T, e)
        out = block.after_attention(y + block.attn.heads_out(z.transpose(1, 2)))
        torch.testing.assert_close(out, block(y, None, None, ""), rtol=0, atol=1e-12)
