"""Measures engine-iteration times of Llama-shaped models on one GPU, to check the roofline (src/perf/roofline.ts).

Random bf16 weights, no checkpoint. A minimal Llama forward (RMSNorm, fused QKV, RoPE, attention, SwiGLU, LM head
on one token per sequence, as vLLM computes logits) timed as an engine would run it:

- prefill: B sequences of L prompt tokens, eager, causal attention through PyTorch's SDPA (FlashAttention on
  Hopper); K/V are not written to a paged cache (a copy of 2·layers·kvHeads·headDim values per token, small);
- decode: B sequences each attending to a context of C tokens in a contiguous KV cache, the new token's K/V
  written into it, captured once as a CUDA graph and timed by replays (vLLM replays graphs for decode); a few
  decode shapes are also timed eagerly, to show what the graph saves;
- prefix (`--prefix`): one sequence's prompt chunk of P tokens whose first C tokens are already in a contiguous KV
  cache (a cached prefix, or the earlier chunks of a chunked prefill): the chunk's K/V written into the cache, its
  queries attending to all C cached keys and causally within the chunk (bottom-right causal alignment), eager and
  fused as prefill. The roofline charges such a chunk P · (C + (P + 1)/2) attended pairs; these rows check that.

A transformers LlamaForCausalLM of the same shape times a few prefills as a cross-check of the minimal forward.
Rows: hardware,model,layers,kind,batch,tokens_per_seq,impl,median_ms,p10_ms,p90_ms (tokens_per_seq = prompt L,
context C, or for `prefix` the cached tokens C), with chunk_tokens (the prompt chunk P) for `mixed` and `prefix`;
written to DIR/steps.csv (and the log to DIR/log.txt) in every mode. `llmfleet calibrate --steps FILE` checks the
roofline against them.

    python3 bench/gpu/measure_steps.py --out DIR          # on the GPU, ≈ 5-6 min on an H100 (the two small models ≈ 100 s)
    python3 bench/gpu/measure_steps.py --mixed --out DIR  # mixed prompt-chunk + decode steps instead (column chunk_tokens)
    python3 bench/gpu/measure_steps.py --long --models llama3.1-8b --variants fused --out DIR  # 8k-32k tokens
    python3 bench/gpu/measure_steps.py --moe --out DIR    # Mixtral-8x7B, 4 layers, experts as grouped GEMMs
    python3 bench/gpu/measure_steps.py --prefix --no-hf --out DIR  # llama3.1-8b chunks of 512/2048 after 0-32k cached tokens, est. ≈ 1 min on an H200
    python3 bench/gpu/measure_steps.py --prefix --smoke --out DIR  # the same on the tiny model on the CPU, seconds
    python3 bench/gpu/measure_steps.py --smoke --out DIR  # tiny shapes on the CPU, to check the script
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

MODELS = {
    # name: shape; `layers` may be fewer than the model has (a slice that fits one GPU: the check scales the spec).
    'llama2-7b': dict(layers=32, hidden=4096, heads=32, kv=32, hd=128, inter=11008, vocab=32000),
    'llama3.1-8b': dict(layers=32, hidden=4096, heads=32, kv=8, hd=128, inter=14336, vocab=128256),
    'llama2-70b': dict(layers=10, hidden=8192, heads=64, kv=8, hd=128, inter=28672, vocab=32000),
    # small models, where the fixed per-step and per-layer costs weigh most (tied embeddings: same time, one matrix)
    'llama3.2-1b': dict(layers=16, hidden=2048, heads=32, kv=8, hd=64, inter=8192, vocab=128256),
    'llama3.2-3b': dict(layers=28, hidden=3072, heads=24, kv=8, hd=128, inter=8192, vocab=128256),
}
SMOKE_MODELS = {'tiny': dict(layers=2, hidden=256, heads=4, kv=2, hd=64, inter=512, vocab=1000)}
# Mixture of experts (`--moe`): Mixtral-8x7B's shape, 4 of its 32 layers; the expert MLPs as grouped GEMMs.
MOE_MODELS = {'mixtral-8x7b': dict(layers=4, hidden=4096, heads=32, kv=8, hd=128, inter=14336, vocab=32000, experts=8, topk=2)}
SMOKE_MOE = {'tiny-moe': dict(layers=2, hidden=256, heads=4, kv=2, hd=64, inter=512, vocab=1000, experts=4, topk=2)}
MOE_ALIGN = 16  # rows per expert group are padded to this (the grouped GEMM's alignment; torchtitan pads the same)

PREFILL = [(1, 128), (1, 256), (1, 512), (1, 1024), (1, 2048), (1, 4096), (1, 8192), (4, 256), (4, 1024), (16, 128), (2, 2048)]
DECODE_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
DECODE_CONTEXTS = [256, 1024, 4096]
EAGER_DECODE = [(1, 1024), (32, 1024)]
KV_BUDGET_BYTES = 40e9  # the largest decode cache allocated
HARDWARE = 'cpu'  # the catalog id of the device measured (set in main)


# CUDA device names (torch.cuda.get_device_name) of the catalog's devices (src/model/hardware.ts). Matched exactly:
# an H100 PCIe or NVL, an L40S or a GH200 has another datasheet than its namesake, so it keeps its own name and
# needs a catalog entry (`calibrate --catalog FILE`).
CATALOG_IDS = {
    'NVIDIA H100 80GB HBM3': 'h100-80gb',
    'NVIDIA H200': 'h200',
    'NVIDIA A100-SXM4-80GB': 'a100-80gb',
    'NVIDIA A100-SXM4-40GB': 'a100-40gb',
    'NVIDIA L4': 'l4',
    'NVIDIA A10G': 'a10g',
    'NVIDIA RTX A6000': 'a6000',
    'NVIDIA GeForce RTX 4090': 'rtx4090',
    'AMD Instinct MI300X': 'mi300x',
}


def catalog_id(device_name):
    """llmfleet's catalog id for a CUDA device name, else the name in lower case with dashes."""
    return CATALOG_IDS.get(device_name.strip(), device_name.strip().lower().replace(' ', '-'))


class Timer:
    """Median / p10 / p90 of repeated runs of fn, in ms; CUDA events on the GPU, the host clock on the CPU."""

    def __init__(self, dev):
        self.dev = dev

    def __call__(self, fn, warmup=3, reps=10):
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            if self.dev.type == 'cuda':
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
            else:
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
        return statistics.median(times), q(0.1), q(0.9)


def rms_norm(x, w, eps=1e-5):
    v = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(v + eps)).to(x.dtype) * w


def rope(x, cos, sin):
    # x: [..., T, hd]; rotate halves (Llama's rotate_half convention).
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def _fused_mlp(x, w):
    if 'router' in w:
        return x + _moe_mlp(F.rms_norm(x, (x.shape[-1],), w['ln2'], 1e-5), w)
    g, u = (F.rms_norm(x, (x.shape[-1],), w['ln2'], 1e-5) @ w['wgu']).chunk(2, dim=-1)
    return torch.addmm(x, F.silu(g) * u, w['wd'])


def _moe_mlp(x, w):
    """Top-k routing, then each expert's SwiGLU over its tokens as one grouped GEMM per projection (as vLLM's fused
    MoE kernel: an expert no token chose is not read). Static shapes throughout, so a decode step can be captured
    as a CUDA graph: the token copies are sorted by expert into a buffer whose groups are padded to MOE_ALIGN rows."""
    T, D = x.shape
    E, K = w['w13'].shape[0], w['topk']
    gates, chosen = torch.softmax((x @ w['router']).float(), dim=-1).topk(K, dim=-1)
    gates = (gates / gates.sum(-1, keepdim=True)).to(x.dtype).reshape(-1)
    flat = chosen.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = F.one_hot(flat, E).sum(0)
    padded = (counts + MOE_ALIGN - 1) // MOE_ALIGN * MOE_ALIGN
    ends = torch.cumsum(padded, 0)
    sorted_e = flat[order]
    rank = torch.arange(T * K, device=x.device) - (torch.cumsum(counts, 0) - counts)[sorted_e]
    dest = (ends - padded)[sorted_e] + rank
    token = order // K
    buf = torch.zeros(T * K + E * MOE_ALIGN, D, device=x.device, dtype=x.dtype)
    buf[dest] = x[token]
    if w['grouped']:
        offs = ends.to(torch.int32)
        h = torch._grouped_mm(buf, w['w13'].transpose(-2, -1), offs=offs)
        g, u = h.chunk(2, dim=-1)
        y = torch._grouped_mm((F.silu(g) * u).contiguous(), w['w2'].transpose(-2, -1), offs=offs)
    else:  # no grouped GEMM in this PyTorch: one GEMM per expert over its group (eager only: data-dependent shapes)
        y = torch.zeros_like(buf)
        lo = 0
        for e, hi in enumerate(ends.tolist()):
            if hi > lo:
                g, u = (buf[lo:hi] @ w['w13'][e].T).chunk(2, dim=-1)
                y[lo:hi] = (F.silu(g) * u) @ w['w2'][e].T
            lo = hi
    return torch.zeros_like(x).index_add_(0, token, y[dest] * gates[order, None])


def grouped_mm_works(dev, dtype):
    """Whether torch._grouped_mm runs here (PyTorch ≥ 2.8 on Hopper or newer), on a small case checked against loops."""
    if dev.type != 'cuda' or not hasattr(torch, '_grouped_mm'):
        return False
    try:
        a = torch.randn(64, 64, device=dev, dtype=dtype)  # rows past the last offset, an empty group: as used
        b = torch.randn(3, 32, 64, device=dev, dtype=dtype)
        offs = torch.tensor([16, 16, 48], device=dev, dtype=torch.int32)
        out = torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)
        ref = torch.cat([a[:16] @ b[0].T, a[16:48] @ b[2].T])
        return bool(torch.allclose(out[:48], ref, atol=0.5, rtol=0.05))
    except Exception:  # noqa: BLE001 - any failure means: use the loop
        return False


def _fused_qkv(x, w, cos, sin, B, L, H, KV, hd):
    """The fused layer's first half: RMSNorm, one QKV GEMM, one rotation for q and k. q is [B, H, L, hd], k and v
    [B, KV, L, hd] (views of the GEMM's output)."""
    qkv = (F.rms_norm(x, (x.shape[-1],), w['ln1'], 1e-5) @ w['wqkv']).view(B, L, H + 2 * KV, hd).transpose(1, 2)
    q, k = rope(qkv[:, :H + KV], cos, sin).split([H, KV], dim=1)
    return q, k, qkv[:, H + KV:]


def _fused_out(x, a, w, B, L, H, hd):
    """The fused layer's second half: the output projection with the residual add in the GEMM, then the MLP."""
    x = torch.addmm(x, a.transpose(1, 2).reshape(B * L, H * hd), w['wo'])
    return _fused_mlp(x, w)


def fused_prefill_layer(x, w, cos, sin, B, L, H, KV, hd):
    """Fewer kernels: PyTorch's fused RMSNorm, one rotation for q and k, SDPA's own GQA, residual adds in the GEMM."""
    q, k, v = _fused_qkv(x, w, cos, sin, B, L, H, KV, hd)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=KV != H)
    return _fused_out(x, a, w, B, L, H, hd)


def fused_prefix_layer(x, w, kc, vc, C, mask, cos, sin, H, KV, hd):
    """A prompt chunk of P = len(x) tokens of one sequence whose first C tokens are in the cache kc, vc
    ([1, KV, ≥ C + P, hd]): the chunk's K/V written to cache slots C..C+P-1, then its queries attend over cache[:C+P].

    The mask must be bottom-right aligned (`causal_lower_right(P, C + P)`: chunk token i sees cached keys 0..C-1 and
    chunk keys 0..i). SDPA's `is_causal=True` is top-left aligned: with P queries and C + P keys, query i would see
    keys 0..i only, i.e. the first P cached tokens and none of its own chunk, and the step would cost P²/2 pairs
    whatever C is. SDPA runs a CausalBias through FlashAttention (causal there means bottom-right), not a
    materialised mask. With C = 0 the two alignments agree: plain is_causal, as prefill."""
    P = x.shape[0]
    q, k, v = _fused_qkv(x, w, cos, sin, 1, P, H, KV, hd)
    kc[:, :, C:C + P] = k
    vc[:, :, C:C + P] = v
    a = F.scaled_dot_product_attention(q, kc[:, :, :C + P], vc[:, :, :C + P], attn_mask=mask, is_causal=mask is None, enable_gqa=KV != H)
    return _fused_out(x, a, w, 1, P, H, hd)


def fused_decode_layer(x, w, kc, vc, cos, sin, H, KV, hd):
    B = x.shape[0]
    qkv = (F.rms_norm(x, (x.shape[-1],), w['ln1'], 1e-5) @ w['wqkv']).view(B, H + 2 * KV, hd)
    q, k = rope(qkv[:, :H + KV], cos, sin).split([H, KV], dim=1)
    kc[:, :, -1] = k
    vc[:, :, -1] = qkv[:, H + KV:]
    a = F.scaled_dot_product_attention(q.unsqueeze(2), kc, vc, enable_gqa=KV != H)
    x = torch.addmm(x, a.reshape(B, H * hd), w['wo'])
    return _fused_mlp(x, w)


_compiled = {}


def layer_fns(variant):
    """(prefill layer, decode layer) of the fused forward, eager or under torch.compile (what vLLM V1 runs)."""
    if variant == 'fused':
        return fused_prefill_layer, fused_decode_layer
    if not _compiled:
        _compiled['p'] = torch.compile(fused_prefill_layer, dynamic=True)
        _compiled['d'] = torch.compile(fused_decode_layer, dynamic=True)
    return _compiled['p'], _compiled['d']


class MiniLlama:
    def __init__(self, cfg, dev, dtype):
        self.c, self.dev, self.dtype = cfg, dev, dtype
        self.variant = 'plain'
        h, H, KV, hd, I = cfg['hidden'], cfg['heads'], cfg['kv'], cfg['hd'], cfg['inter']
        r = lambda *s: (torch.randn(*s, device=dev, dtype=dtype) * 0.02)
        self.emb = r(cfg['vocab'], h)
        self.head = r(h, cfg['vocab'])
        self.norm = torch.ones(h, device=dev, dtype=dtype)
        E = cfg.get('experts', 0)
        grouped = E > 0 and grouped_mm_works(dev, dtype)
        mlp = (lambda: dict(router=r(h, E), w13=r(E, 2 * I, h), w2=r(E, h, I), topk=cfg['topk'], grouped=grouped)) if E else (lambda: dict(wgu=r(h, 2 * I), wd=r(I, h)))
        self.layers = [
            dict(ln1=torch.ones(h, device=dev, dtype=dtype), wqkv=r(h, (H + 2 * KV) * hd), wo=r(H * hd, h),
                 ln2=torch.ones(h, device=dev, dtype=dtype), **mlp())
            for _ in range(cfg['layers'])
        ]
        self.moe_impl = ('grouped' if grouped else 'loop') if E else None
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
        self.inv_freq = inv

    def cos_sin(self, pos):
        f = torch.outer(pos.float(), self.inv_freq)
        e = torch.cat((f, f), dim=-1)
        return e.cos().to(self.dtype), e.sin().to(self.dtype)

    def _mlp(self, x, w):
        g, u = (rms_norm(x, w['ln2']) @ w['wgu']).chunk(2, dim=-1)
        return x + (F.silu(g) * u) @ w['wd']

    def prefill(self, ids):
        B, L = ids.shape
        c = self.c
        H, KV, hd = c['heads'], c['kv'], c['hd']
        cos, sin = self.cos_sin(torch.arange(L, device=self.dev))
        x = self.emb[ids.reshape(-1)]
        if self.variant != 'plain':
            layer = layer_fns(self.variant)[0]
            for w in self.layers:
                x = layer(x, w, cos, sin, B, L, H, KV, hd)
            return rms_norm(x.view(B, L, -1)[:, -1], self.norm) @ self.head
        for w in self.layers:
            qkv = rms_norm(x, w['ln1']) @ w['wqkv']
            q, k, v = qkv.view(B, L, H + 2 * KV, hd).transpose(1, 2).split([H, KV, KV], dim=1)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            if KV != H:
                k, v = k.repeat_interleave(H // KV, dim=1), v.repeat_interleave(H // KV, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + a.transpose(1, 2).reshape(B * L, H * hd) @ w['wo']
            x = self._mlp(x, w)
        last = x.view(B, L, -1)[:, -1]
        return rms_norm(last, self.norm) @ self.head

    def prefix_chunk(self, ids, caches, C):
        """One sequence's prompt chunk (ids: [P]) after C cached tokens (fused ops, eager, as fused prefill); logits
        for its last token. caches: per layer (k, v) of [1, KV, ≥ C + P, hd]; the chunk's K/V are written into them."""
        c = self.c
        H, KV, hd = c['heads'], c['kv'], c['hd']
        P = ids.shape[0]
        cos, sin = self.cos_sin(torch.arange(C, C + P, device=self.dev))
        mask = causal_lower_right(P, C + P) if C > 0 else None
        x = self.emb[ids]
        for w, (kc, vc) in zip(self.layers, caches):
            x = fused_prefix_layer(x, w, kc, vc, C, mask, cos, sin, H, KV, hd)
        return rms_norm(x[-1:], self.norm) @ self.head

    def decode_state(self, B, C):
        c = self.c
        shape = (B, c['kv'], C, c['hd'])
        caches = [(torch.randn(shape, device=self.dev, dtype=self.dtype), torch.randn(shape, device=self.dev, dtype=self.dtype)) for _ in self.layers]
        ids = torch.randint(0, c['vocab'], (B,), device=self.dev)
        pos = torch.full((B,), C - 1, device=self.dev)
        return caches, ids, pos

    def decode(self, caches, ids, pos):
        """One token per sequence; its K/V go to the last slot of each context, then attention over all C."""
        c = self.c
        B = ids.shape[0]
        H, KV, hd = c['heads'], c['kv'], c['hd']
        G = H // KV
        cos, sin = self.cos_sin(pos)
        cos, sin = cos[:, None, :], sin[:, None, :]
        x = self.emb[ids]
        if self.variant != 'plain':
            layer = layer_fns(self.variant)[1]
            for w, (kc, vc) in zip(self.layers, caches):
                x = layer(x, w, kc, vc, cos, sin, H, KV, hd)
            return rms_norm(x, self.norm) @ self.head
        scale = 1.0 / math.sqrt(hd)
        for w, (kc, vc) in zip(self.layers, caches):
            qkv = rms_norm(x, w['ln1']) @ w['wqkv']
            q, k, v = qkv.view(B, H + 2 * KV, hd).split([H, KV, KV], dim=1)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            kc[:, :, -1] = k
            vc[:, :, -1] = v
            # Grouped attention: each K/V head read once for its G query heads (what the roofline assumes).
            s = torch.matmul(q.view(B, KV, G, hd), kc.transpose(-1, -2)) * scale
            a = torch.matmul(torch.softmax(s.float(), dim=-1).to(self.dtype), vc)
            x = x + a.reshape(B, H * hd) @ w['wo']
            x = self._mlp(x, w)
        return rms_norm(x, self.norm) @ self.head


def mixed_step(m, ids_p, caches, ids_d, pos_d):
    """One iteration of a prompt chunk of P tokens (a new sequence) batched with D decoding sequences, as
    chunked prefill runs it: the linear layers over all P + D tokens at once, attention apart (fused ops)."""
    c = m.c
    H, KV, hd = c['heads'], c['kv'], c['hd']
    P, D = ids_p.shape[0], ids_d.shape[0]
    x = m.emb[torch.cat([ids_p, ids_d])]
    if P:
        cos_p, sin_p = m.cos_sin(torch.arange(P, device=m.dev))
    if D:
        cos_d, sin_d = m.cos_sin(pos_d)
        cos_d, sin_d = cos_d[:, None, :], sin_d[:, None, :]
    for w, (kc, vc) in zip(m.layers, caches or [(None, None)] * len(m.layers)):
        qkv = F.rms_norm(x, (x.shape[-1],), w['ln1'], 1e-5) @ w['wqkv']
        parts = []
        if P:
            qp = qkv[:P].view(1, P, H + 2 * KV, hd).transpose(1, 2)
            q, k = rope(qp[:, :H + KV], cos_p, sin_p).split([H, KV], dim=1)
            a = F.scaled_dot_product_attention(q, k, qp[:, H + KV:], is_causal=True, enable_gqa=KV != H)
            parts.append(a.transpose(1, 2).reshape(P, H * hd))
        if D:
            qd = qkv[P:].view(D, H + 2 * KV, hd)
            q, k = rope(qd[:, :H + KV], cos_d, sin_d).split([H, KV], dim=1)
            kc[:, :, -1] = k
            vc[:, :, -1] = qd[:, H + KV:]
            a = F.scaled_dot_product_attention(q.unsqueeze(2), kc, vc, enable_gqa=KV != H)
            parts.append(a.reshape(D, H * hd))
        x = torch.addmm(x, torch.cat(parts) if len(parts) > 1 else parts[0], w['wo'])
        x = _fused_mlp(x, w)
    rows = torch.cat([x[P - 1:P], x[P:]]) if P else x
    return rms_norm(rows, m.norm) @ m.head


MIXED_CHUNKS = [0, 128, 512, 2048]
MIXED_DECODES = [0, 8, 32, 64]
MIXED_CONTEXT = 1024


def measure_mixed(name, cfg, dev, dtype, timer, rows, log, smoke):
    """Mixed prefill + decode steps (and the pure ones at the same shapes), fused ops, replayed as CUDA graphs."""
    m = MiniLlama(cfg, dev, dtype)
    chunks, decodes, C = ([0, 16], [0, 2], 32) if smoke else (MIXED_CHUNKS, MIXED_DECODES, MIXED_CONTEXT)
    with torch.inference_mode():
        for D in decodes:
            caches, ids_d, pos_d = m.decode_state(D, C) if D else (None, torch.zeros(0, dtype=torch.long, device=dev), None)
            for P in chunks:
                if P == 0 and D == 0:
                    continue
                try:
                    ids_p = torch.randint(0, cfg['vocab'], (P,), device=dev)
                    fn = lambda: mixed_step(m, ids_p, caches, ids_d, pos_d)
                    if dev.type == 'cuda':
                        fn = cuda_graph(fn)
                    r = timer(fn, reps=20)
                    rows.append(dict(hardware=HARDWARE, model=name, layers=cfg['layers'], kind='mixed', batch=D, tokens_per_seq=C, impl='fused-graph',
                                     median_ms=f'{r[0]:.4f}', p10_ms=f'{r[1]:.4f}', p90_ms=f'{r[2]:.4f}', chunk_tokens=P))
                    log(f'{name} mixed chunk={P} decodes={D}x{C}: {r[0]:.3f} ms')
                except Exception as e:  # noqa: BLE001
                    log(f'{name} mixed chunk={P} decodes={D} FAILED: {type(e).__name__}: {str(e)[:300]}')
            del caches
            if dev.type == 'cuda':
                torch.cuda.empty_cache()
    del m
    if dev.type == 'cuda':
        torch.cuda.empty_cache()


def kv_bytes(cfg, B, C):
    return 2 * cfg['layers'] * B * C * cfg['kv'] * cfg['hd'] * 2


PREFIX_CHUNKS = [512, 2048]
PREFIX_CACHED = [0, 2048, 8192, 16384, 32768]
PREFIX_HEADROOM_BYTES = 4 * 2**30  # left free beside the weights and the cache (a 2,048-token chunk needs < 1 GiB)


def check_lower_right(cfg, dev, dtype, log):
    """Before timing: a chunk's attention through causal_lower_right equals the last P rows of causal attention over
    all C + P tokens (what a prefill of the whole prompt computes), on small shapes with the model's heads, on the
    device and dtype timed. The top-left is_causal is shown to differ."""
    H, KV, hd = cfg['heads'], cfg['kv'], cfg['hd']
    C, P = 200, 56
    g = torch.Generator(device=dev).manual_seed(0)
    q = torch.randn(1, H, C + P, hd, device=dev, dtype=dtype, generator=g)
    k = torch.randn(1, KV, C + P, hd, device=dev, dtype=dtype, generator=g)
    v = torch.randn(1, KV, C + P, hd, device=dev, dtype=dtype, generator=g)
    with torch.inference_mode():
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=KV != H)[:, :, C:].float()
        got = F.scaled_dot_product_attention(q[:, :, C:], k, v, attn_mask=causal_lower_right(P, C + P), enable_gqa=KV != H).float()
        top_left = F.scaled_dot_product_attention(q[:, :, C:], k, v, is_causal=True, enable_gqa=KV != H).float()
    err, wrong = (got - ref).abs().max().item(), (top_left - ref).abs().max().item()
    flash = '?'
    if dev.type == 'cuda':
        try:
            flash = torch.backends.cuda.can_use_flash_attention(torch.backends.cuda.SDPAParams(q[:, :, C:], k, v, None, 0.0, False, KV != H))
        except Exception as e:  # noqa: BLE001 - informative only
            flash = f'unknown ({type(e).__name__})'
    log(f'prefix attention check (C={C}, P={P}): lower-right vs whole-prompt causal max |diff| {err:.2e} (top-left is_causal: {wrong:.2e}); FlashAttention usable: {flash}')
    if not err < (5e-2 if dtype != torch.float32 else 1e-4) or not wrong > 10 * max(err, 1e-6):
        raise RuntimeError(f'lower-right causal attention does not match a whole-prompt prefill (max |diff| {err}, top-left {wrong})')


def measure_prefix(name, cfg, dev, dtype, timer, rows, log, smoke, save=lambda: None):
    """Prompt chunks of P tokens of one sequence after C cached tokens (kind `prefix`, tokens_per_seq = C,
    chunk_tokens = P), fused ops, eager as fused prefill. One contiguous cache of the largest C that fits plus the
    largest P serves every shape: each chunk writes slots C..C+P-1 and attends over the first C + P."""
    m = MiniLlama(cfg, dev, dtype)
    chunks, cached = ([8, 16], [0, 8, 32]) if smoke else (PREFIX_CHUNKS, PREFIX_CACHED)
    check_lower_right(cfg, dev, dtype, log)
    budget = KV_BUDGET_BYTES
    if dev.type == 'cuda':
        budget = min(budget, torch.cuda.mem_get_info()[0] - PREFIX_HEADROOM_BYTES)
    fits = [C for C in cached if kv_bytes(cfg, 1, C + max(chunks)) <= budget]
    for C in cached:
        if C not in fits:
            log(f'{name} prefix cached={C} skipped: a {kv_bytes(cfg, 1, C + max(chunks)) / 2**30:.1f} GiB cache exceeds the {budget / 2**30:.1f} GiB left')
    if not fits:
        return
    slots = max(fits) + max(chunks)
    shape = (1, cfg['kv'], slots, cfg['hd'])
    caches = [(torch.randn(shape, device=dev, dtype=dtype), torch.randn(shape, device=dev, dtype=dtype)) for _ in m.layers]
    log(f'{name} prefix: cache of {slots} tokens ({kv_bytes(cfg, 1, slots) / 2**30:.1f} GiB), {cfg["layers"]} layers')
    with torch.inference_mode():
        for C in fits:
            for P in chunks:
                try:
                    ids = torch.randint(0, cfg['vocab'], (P,), device=dev)
                    r = timer(lambda: m.prefix_chunk(ids, caches, C), warmup=3, reps=15)
                    rows.append(dict(hardware=HARDWARE, model=name, layers=cfg['layers'], kind='prefix', batch=1, tokens_per_seq=C, impl='fused-eager',
                                     median_ms=f'{r[0]:.4f}', p10_ms=f'{r[1]:.4f}', p90_ms=f'{r[2]:.4f}', chunk_tokens=P))
                    log(f'{name} prefix chunk={P} cached={C}: {r[0]:.3f} ms')
                    save()
                except Exception as e:  # noqa: BLE001 - keep the other shapes
                    log(f'{name} prefix chunk={P} cached={C} FAILED: {type(e).__name__}: {str(e)[:300]}')
    del caches, m
    if dev.type == 'cuda':
        torch.cuda.empty_cache()


VARIANTS = {  # variant: (prefill impl, decode impl) names in the CSV
    'plain': ('mini-eager', 'mini-graph'),
    'fused': ('fused-eager', 'fused-graph'),
    'compiled': ('compiled', 'compiled-graph'),
}
TIME_GUARD_S = 330  # no compiled variant is started after this (compiling costs tens of seconds per model)


LONG_PREFILL = [(1, 8192), (1, 16384), (1, 32768)]
LONG_DECODE_BATCHES = [1, 8, 32]
LONG_DECODE_CONTEXTS = [8192, 16384, 32768]


def measure_model(name, cfg, dev, dtype, timer, rows, log, smoke, t0, variants, long=False, save=lambda: None):
    m = MiniLlama(cfg, dev, dtype)
    prefill = [(1, 16), (2, 32)] if smoke else LONG_PREFILL if long else PREFILL
    batches, contexts = ([1, 4], [32, 64]) if smoke else (LONG_DECODE_BATCHES, LONG_DECODE_CONTEXTS) if long else (DECODE_BATCHES, DECODE_CONTEXTS)
    eager = [(1, 32)] if smoke else [] if long else EAGER_DECODE

    def out(kind, B, T, impl, r):
        rows.append(dict(hardware=HARDWARE, model=name, layers=cfg['layers'], kind=kind, batch=B, tokens_per_seq=T, impl=impl,
                         median_ms=f'{r[0]:.4f}', p10_ms=f'{r[1]:.4f}', p90_ms=f'{r[2]:.4f}'))
        if long:
            save()  # long shapes take seconds each: keep what a cut-short run measured
    for variant, (pname, dname) in VARIANTS.items():
        if variant not in variants:
            continue
        if m.moe_impl is not None:  # comparison-only rows of their own (the fit takes dense fused/compiled rows)
            pname, dname = f'moe-{m.moe_impl}-eager', f'moe-{m.moe_impl}-graph'
        if variant == 'compiled' and time.time() - t0 > TIME_GUARD_S:
            log(f'{name}: compiled variant skipped (past {TIME_GUARD_S} s)')
            continue
        m.variant = variant
        with torch.inference_mode():
            for B, L in prefill:
                try:
                    ids = torch.randint(0, cfg['vocab'], (B, L), device=dev)
                    r = timer(lambda: m.prefill(ids), reps=7)
                    out('prefill', B, L, pname, r)
                    log(f'{name} prefill {pname} B={B} L={L}: {r[0]:.3f} ms')
                except Exception as e:  # noqa: BLE001 - keep the other shapes
                    log(f'{name} prefill {pname} B={B} L={L} FAILED: {type(e).__name__}: {str(e)[:300]}')
            for C in contexts:
                for B in batches:
                    if kv_bytes(cfg, B, C) > KV_BUDGET_BYTES:
                        continue
                    try:
                        measure_decode(m, name, B, C, dev, timer, out, log, eager if variant == 'plain' else [], dname)
                    except Exception as e:  # noqa: BLE001
                        log(f'{name} decode {dname} B={B} C={C} FAILED: {type(e).__name__}: {str(e)[:300]}')
                    if dev.type == 'cuda':
                        torch.cuda.empty_cache()
        log(f'-- {name} {variant} done at {time.time() - t0:.0f} s')
    del m
    if dev.type == 'cuda':
        torch.cuda.empty_cache()


def measure_decode(m, name, B, C, dev, timer, out, log, eager, dname):
    """One decode shape: eager when asked, then as a captured CUDA graph (GPU only)."""
    caches, ids, pos = m.decode_state(B, C)
    if m.moe_impl == 'loop':  # data-dependent shapes: no graph
        r = timer(lambda: m.decode(caches, ids, pos), reps=10)
        out('decode', B, C, dname.replace('-graph', '-eager'), r)
        log(f'{name} decode {dname} (eager) B={B} C={C}: {r[0]:.3f} ms')
        return
    if (B, C) in eager:
        r = timer(lambda: m.decode(caches, ids, pos), reps=10)
        out('decode', B, C, 'mini-eager', r)
        log(f'{name} decode eager B={B} C={C}: {r[0]:.3f} ms')
    if dev.type == 'cuda':
        r = timer(cuda_graph(lambda: m.decode(caches, ids, pos)), reps=20)
        out('decode', B, C, dname, r)
        log(f'{name} decode {dname} B={B} C={C}: {r[0]:.3f} ms')


def cuda_graph(fn, warmup=2):
    """`fn` captured as a CUDA graph after `warmup` runs on a side stream (as vLLM captures decode); returns its replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def hf_cross_check(dev, dtype, timer, rows, log, smoke):
    """transformers' own Llama, same shape as llama2-7b (or the smoke model), a few prefills with logits for one token."""
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
    except Exception as e:  # noqa: BLE001 - the check is optional
        log(f'hf cross-check skipped: {e}')
        return
    name, cfg = ('tiny', SMOKE_MODELS['tiny']) if smoke else ('llama2-7b', MODELS['llama2-7b'])
    conf = LlamaConfig(hidden_size=cfg['hidden'], intermediate_size=cfg['inter'], num_hidden_layers=cfg['layers'],
                       num_attention_heads=cfg['heads'], num_key_value_heads=cfg['kv'], vocab_size=cfg['vocab'],
                       max_position_embeddings=8192)
    conf._attn_implementation = 'sdpa'
    try:
        torch.set_default_dtype(dtype)
        with torch.device(dev):
            model = LlamaForCausalLM(conf).eval()
        torch.set_default_dtype(torch.float32)
        for B, L in ([(1, 16)] if smoke else [(1, 512), (1, 2048), (4, 1024)]):
            ids = torch.randint(0, cfg['vocab'], (B, L), device=dev)
            with torch.inference_mode():
                r = timer(lambda: model(input_ids=ids, use_cache=False, logits_to_keep=1), reps=7)
            rows.append(dict(hardware=HARDWARE, model=name, layers=cfg['layers'], kind='prefill', batch=B, tokens_per_seq=L, impl='hf-eager',
                             median_ms=f'{r[0]:.4f}', p10_ms=f'{r[1]:.4f}', p90_ms=f'{r[2]:.4f}'))
            log(f'hf {name} prefill B={B} L={L}: {r[0]:.3f} ms')
        del model
    except Exception as e:  # noqa: BLE001
        torch.set_default_dtype(torch.float32)
        log(f'hf cross-check failed: {type(e).__name__}: {e}')
    if dev.type == 'cuda':
        torch.cuda.empty_cache()


def ceilings(dev, dtype, timer, log):
    """Achieved matmul FLOP/s and copy bandwidth on this card, for reading the fitted factors against the datasheet."""
    n = 8192
    a, b = torch.randn(n, n, device=dev, dtype=dtype), torch.randn(n, n, device=dev, dtype=dtype)
    ms = timer(lambda: a @ b, warmup=5, reps=10)[0]
    x = torch.empty(int(2e9), device=dev, dtype=torch.uint8)
    y = torch.empty_like(x)
    cms = timer(lambda: y.copy_(x), warmup=3, reps=10)[0]
    log(f'ceilings: bf16 matmul {2 * n**3 / ms / 1e9:.0f} TFLOP/s; copy {2 * x.numel() / cms / 1e6:.0f} GB/s (read + write)')
    del a, b, x, y
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--out', default='.')
    p.add_argument('--smoke', action='store_true')
    p.add_argument('--models', default=None, help=f'comma-separated, of {", ".join(MODELS)} (default: all; llama3.1-8b with --prefix)')
    p.add_argument('--variants', default=','.join(VARIANTS), help='which of plain, fused, compiled')
    p.add_argument('--no-hf', action='store_true', help="skip the transformers cross-check")
    p.add_argument('--mixed', action='store_true', help='time mixed prefill-chunk + decode steps instead (kind "mixed")')
    p.add_argument('--long', action='store_true', help='long prompts and contexts instead (8k-32k tokens; use with --models llama3.1-8b)')
    p.add_argument('--moe', action='store_true', help='a mixture of experts instead: 4 layers of Mixtral-8x7B, fused variant, grouped-GEMM experts')
    p.add_argument('--prefix', action='store_true', help='prompt chunks after a cached prefix instead (kind "prefix": P = 512, 2048 tokens after C = 0-32k cached)')
    args = p.parse_args()
    if sum([args.mixed, args.long, args.moe, args.prefix]) > 1:
        p.error('--mixed, --long, --moe and --prefix: give one mode at a time')
    if args.models is None:
        args.models = 'llama3.1-8b' if args.prefix else ','.join(MODELS)
    unknown = [k for k in args.models.split(',') if k not in MODELS]
    if unknown and not args.smoke and not args.moe:
        p.error(f'--models: unknown {", ".join(unknown)} (known: {", ".join(MODELS)})')
    dev = torch.device('cpu' if args.smoke else 'cuda')
    dtype = torch.float32 if args.smoke else torch.bfloat16
    os.makedirs(args.out, exist_ok=True)
    logf = open(os.path.join(args.out, 'log.txt'), 'w')

    def log(s):
        print(s, flush=True)
        logf.write(s + '\n')
        logf.flush()

    timer = Timer(dev)
    rows = []
    global HARDWARE
    if dev.type == 'cuda':
        props = torch.cuda.get_device_properties(0)
        HARDWARE = catalog_id(props.name)
        log(f'device: {props.name}, {props.total_memory / 2**30:.1f} GiB, {props.multi_processor_count} SMs; torch {torch.__version__}')
        ceilings(dev, dtype, timer, log)
    if args.smoke and args.variants == ','.join(VARIANTS):
        args.variants = 'plain,fused'  # torch.compile on a CPU builds C++ for minutes: only when asked for
    if args.moe:
        models, args.variants, args.no_hf = (SMOKE_MOE if args.smoke else MOE_MODELS), 'fused', True
    else:
        models = SMOKE_MODELS if args.smoke else {k: MODELS[k] for k in args.models.split(',')}
    t0 = time.time()
    path = os.path.join(args.out, 'steps.csv')

    def save():  # after every model, so a run cut short still returns what it measured
        if rows:
            with open(path, 'w', newline='') as f:
                wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                wr.writeheader()
                wr.writerows(rows)

    for name, cfg in models.items():
        if args.mixed:
            measure_mixed(name, cfg, dev, dtype, timer, rows, log, args.smoke)
            save()
            continue
        if args.prefix:
            measure_prefix(name, cfg, dev, dtype, timer, rows, log, args.smoke, save)
            save()
            continue
        measure_model(name, cfg, dev, dtype, timer, rows, log, args.smoke, t0, args.variants.split(','), args.long, save)
        save()
    if not args.no_hf and not args.mixed and not args.long and not args.prefix:
        hf_cross_check(dev, dtype, timer, rows, log, args.smoke)
    save()
    log(f'{len(rows)} rows -> {path} in {time.time() - t0:.0f} s')


if __name__ == '__main__':
    sys.exit(main())
