"""Attention alone: cost per attended (query, key) pair of SDPA (FlashAttention) for whole causal prompts and for
prompt chunks after a cached prefix (bottom-right causal), at Llama-3.1-8B's heads (32 q, 8 kv, hd 128), bf16, one
layer. Shows whether a chunk's higher cost per pair is a matter of parallel work (query blocks × heads × batch).

    python3 bench/gpu/attn_pairs.py
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

H, KV, HD = 32, 8, 128
dev, dt = torch.device('cuda'), torch.bfloat16


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / reps


def run(B, P, C, layout='bhld'):
    if layout == 'bhld':
        q = torch.randn(B, H, P, HD, device=dev, dtype=dt)
        k = torch.randn(B, KV, C + P, HD, device=dev, dtype=dt)
        v = torch.randn(B, KV, C + P, HD, device=dev, dtype=dt)
    else:  # as the model's views of its fused QKV output: [B, L, heads, hd] in memory
        q = torch.randn(B, P, H, HD, device=dev, dtype=dt).transpose(1, 2)
        k = torch.randn(B, C + P, KV, HD, device=dev, dtype=dt).transpose(1, 2)
        v = torch.randn(B, C + P, KV, HD, device=dev, dtype=dt).transpose(1, 2)
    mask = causal_lower_right(P, C + P) if C > 0 else None
    with torch.inference_mode(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None, enable_gqa=True))
    pairs = B * P * (C + (P + 1) / 2)
    blocks = B * H * -(-P // 128)
    print(f'{layout} B={B:3d} P={P:6d} C={C:6d}  {ms:8.3f} ms  {ms * 1e6 / pairs / 1e0:7.4f} ns/pair/layer  query blocks x heads x batch = {blocks}', flush=True)


print(torch.cuda.get_device_name(), torch.__version__, 'SMs', torch.cuda.get_device_properties(0).multi_processor_count, flush=True)
for L in [2048, 4096, 16384, 34816]:
    run(1, L, 0)
for P in [512, 2048, 8192]:
    for B in [1, 4, 16]:
        if B * P <= 32768:
            run(B, P, 32768)
run(1, 2048, 8192)
run(8, 2048, 8192)
for L in [4096, 32768]:
    run(1, L, 0, 'blhd')
run(1, 2048, 32768, 'blhd')
for mod in ['flash_attn', 'flash_attn_interface', 'vllm']:
    try:
        __import__(mod)
        print(mod, 'importable')
    except Exception as e:  # noqa: BLE001
        print(mod, 'not importable:', type(e).__name__)
