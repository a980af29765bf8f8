"""Times weight-only quantised linear layers (INT4 / INT8 weights, bf16 activations) against bf16 on one GPU.

The planner's INT8 / INT4 tiers become simulator models whose weights take ν of the bf16 bytes
(`weightBytesPerParam`, src/optimize/joint-allocation/fleet-export.ts): the roofline then reads fewer weight bytes
and computes at the bf16 rate. This measures what kernels that ship with PyTorch do with the four linear layers of
one Llama-2-7B layer (qkv, o, gate+up, down) at M tokens per step:

- `bf16`: F.linear;
- `int4-tinygemm`: aten._weight_int4pack_mm (the tinygemm kernel torchao's int4 weight-only path uses), group 128;
- `int8-pack`: aten._weight_int8pack_mm (per-channel scales), where this PyTorch has it on CUDA;
- `int8-w8a8`: torch._int_mm, int8 weights and int8 activations (cuBLASLt's int8 GEMM, as W8A8 / SmoothQuant
  engines run INT8), the GEMM alone (the activations' quantisation and the output's scaling are separate
  element-wise kernels here, fused in an engine's); from 32 tokens (cuBLASLt wants more than 16 rows).

Each is captured as a CUDA graph of `--layers` layers (as an engine replays decode) and timed by replays with CUDA
events: median of 20, per layer. Engines with Marlin-class kernels (vLLM) may do better than these kernels; this is
what can be measured without installing one.

    python3 bench/gpu/weight_only.py --out DIR     # on the GPU, ≈ 1 min; DIR/weight-only.csv and DIR/log.txt
    python3 bench/gpu/weight_only.py --impls bf16,int8-w8a8 --out DIR   # some of them
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

from measure_steps import Timer, cuda_graph

# (in_features K, out_features N) of one Llama-2-7B layer's linear layers.
LAYER = [('qkv', 4096, 12288), ('o', 4096, 4096), ('gate_up', 4096, 22016), ('down', 11008, 4096)]
TOKENS = [1, 4, 16, 32, 64, 128, 256, 1024, 4096]
IMPLS = ['bf16', 'int4-tinygemm', 'int8-pack', 'int8-w8a8']
GROUP = 128


def int4_pack(w):
    n, k = w.shape
    wg = w.float().reshape(n, k // GROUP, GROUP)
    lo, hi = wg.amin(-1, keepdim=True), wg.amax(-1, keepdim=True)
    scale = (hi - lo).clamp(min=1e-6) / 15
    q = ((wg - lo) / scale).round().clamp(0, 15).to(torch.int32).reshape(n, k)
    zero = lo + 8 * scale  # tinygemm dequantises (q - 8) * scale + zero
    packed = torch.ops.aten._convert_weight_to_int4pack((q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8).contiguous(), 8)
    sz = torch.cat([scale, zero], 2).transpose(0, 1).contiguous().to(torch.bfloat16)  # [k / group, n, 2]
    return packed, sz


def int8_pack(w):
    scale = w.float().abs().amax(1).clamp(min=1e-6) / 127
    q = (w.float() / scale[:, None]).round().clamp(-127, 127).to(torch.int8)
    return q.contiguous(), scale.to(torch.bfloat16)


def build(impl, weights):
    if impl == 'bf16':
        return [lambda x, w=w: F.linear(x, w) for w in weights]
    if impl == 'int4-tinygemm':
        packs = [int4_pack(w) for w in weights]
        return [lambda x, p=p: torch.ops.aten._weight_int4pack_mm(x, p[0], GROUP, p[1]) for p in packs]
    packs = [int8_pack(w) for w in weights]
    if impl == 'int8-w8a8':
        return [lambda x, q=q: torch._int_mm(x, q.t()) for q, _ in packs]
    return [lambda x, p=p: torch.ops.aten._weight_int8pack_mm(x, p[0], p[1]) for p in packs]


def graph_ms(step):
    """Median ms of 20 replays of `step` captured as a CUDA graph (measure_steps' timing)."""
    return Timer(torch.device('cuda'))(cuda_graph(step, warmup=3), warmup=3, reps=20)[0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--out', default='.')
    p.add_argument('--layers', type=int, default=8, help='distinct layers per graph (weights not cached in L2)')
    p.add_argument('--impls', default=','.join(IMPLS), help=f'comma-separated, of {", ".join(IMPLS)}')
    args = p.parse_args()
    impls = args.impls.split(',')
    unknown = [i for i in impls if i not in IMPLS]
    if unknown:
        p.error(f'--impls: unknown {", ".join(unknown)} (expected some of {", ".join(IMPLS)})')
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, 'log.txt'), 'w', buffering=1)

    def say(msg):
        print(msg, flush=True)
        log.write(msg + '\n')

    props = torch.cuda.get_device_properties(0)
    say(f'device: {props.name}, {props.total_memory / 2**30:.1f} GiB; torch {torch.__version__}')
    torch.manual_seed(0)
    weights = [[torch.randn(n, k, device='cuda', dtype=torch.bfloat16) * 0.02 for _, k, n in LAYER]
               for _ in range(args.layers)]
    layer_bytes = sum(k * n for _, k, n in LAYER) * 2
    csv = open(os.path.join(args.out, 'weight-only.csv'), 'w', buffering=1)
    csv.write('device,model,tokens,impl,ms_per_layer,rel_error\n')
    rows = 0
    for impl in impls:
        say(f'{impl}: preparing')
        try:
            layers = [build(impl, ws) for ws in weights]
        except Exception as e:  # a kernel this build lacks
            say(f'{impl}: unavailable ({type(e).__name__}: {str(e).splitlines()[0][:160]})')
            continue
        for m in TOKENS:
            w8a8 = impl == 'int8-w8a8'
            if w8a8 and m <= 16:
                continue
            x = torch.randn(m, 4096, device='cuda', dtype=torch.bfloat16)
            xd = torch.randn(m, 11008, device='cuda', dtype=torch.bfloat16)
            try:
                ref = F.linear(x, weights[0][0])
                if w8a8:  # per-tensor activation scales; the output dequantised for the error check only
                    xs, xds = x.abs().max() / 127, xd.abs().max() / 127
                    x, xd = (x / xs).round().to(torch.int8), (xd / xds).round().to(torch.int8)
                    q, ws = int8_pack(weights[0][0])
                    out = torch._int_mm(x, q.t()).float() * xs.float() * ws.float()
                else:
                    out = layers[0][0](x).float()
                err = ((out - ref.float()).norm() / ref.float().norm()).item()

                def step(layers=layers, x=x, xd=xd):
                    for qkv, o, gate_up, down in layers:
                        qkv(x); o(x); gate_up(x); down(xd)

                ms = graph_ms(step) / args.layers
            except Exception as e:
                say(f'{impl} M={m}: failed ({type(e).__name__}: {str(e).splitlines()[0][:160]})')
                break
            flops = 2 * m * layer_bytes / 2
            say(f'{impl} M={m}: {ms:.4f} ms per layer ({layer_bytes / 1e6 / ms:.0f} GB/s of bf16 weights, '
                f'{flops / 1e9 / ms:.0f} TFLOP/s; rel. error vs bf16 {err:.3f})')
            csv.write(f'{props.name},llama2-7b,{m},{impl},{ms:.5f},{err:.4f}\n')
            rows += 1
            if ms > 20:  # a kernel this slow is no engine's choice: larger M only costs time
                say(f'{impl}: over 20 ms per layer, larger M skipped')
                break
    say(f'{rows} rows -> {os.path.join(args.out, "weight-only.csv")}')


if __name__ == '__main__':
    sys.exit(main())
