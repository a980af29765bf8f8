import type { HardwareSpec } from './types.ts';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/**
 * Built-in devices. Memory is what the driver reports as total (nvidia-smi / rocm-smi), so a "80 GB" H100 is
 * 81,559 MiB. FLOP/s are dense bf16 tensor peaks (no 2:4 sparsity). Interconnect is per device, per direction
 * (NVLink 4 "900 GB/s" is 450 GB/s each way). Prices are on-demand list prices per device-hour, taken as the
 * price of a public cloud instance divided by its device count (USD, us-east / us-central regions, 2024 lists);
 * they move often: override them from a catalog YAML for real planning.
 */
export const HARDWARE = {
  'a100-40gb': {
    name: 'a100-40gb',
    kind: 'gpu',
    memoryBytes: 40_960 * MiB,
    bf16Flops: 312e12,
    memBandwidthBytesPerS: 1_555e9,
    interconnectBytesPerS: 300e9,
    priceUsdPerHour: 4.1,
    devicesPerNode: 8,
    source: 'NVIDIA A100 datasheet (SXM4 40GB: 312 TF bf16 dense, 1,555 GB/s, NVLink3 600 GB/s bidir); price AWS p4d.24xlarge $32.77/h ÷ 8',
  },
  'a100-80gb': {
    name: 'a100-80gb',
    kind: 'gpu',
    memoryBytes: 81_920 * MiB,
    bf16Flops: 312e12,
    memBandwidthBytesPerS: 2_039e9,
    interconnectBytesPerS: 300e9,
    priceUsdPerHour: 5.12,
    devicesPerNode: 8,
    source: 'NVIDIA A100 datasheet (SXM4 80GB: 312 TF bf16 dense, 2,039 GB/s, NVLink3 600 GB/s bidir); price AWS p4de.24xlarge $40.97/h ÷ 8',
  },
  'h100-80gb': {
    name: 'h100-80gb',
    kind: 'gpu',
    memoryBytes: 81_559 * MiB,
    bf16Flops: 989e12,
    memBandwidthBytesPerS: 3_350e9,
    interconnectBytesPerS: 450e9,
    priceUsdPerHour: 12.29,
    devicesPerNode: 8,
    source: 'NVIDIA H100 SXM5 datasheet (989 TF bf16 dense, 3.35 TB/s, NVLink4 900 GB/s bidir); price AWS p5.48xlarge $98.32/h ÷ 8',
  },
  h200: {
    name: 'h200',
    kind: 'gpu',
    memoryBytes: 143_771 * MiB,
    bf16Flops: 989e12,
    memBandwidthBytesPerS: 4_800e9,
    interconnectBytesPerS: 450e9,
    priceUsdPerHour: 10.6,
    devicesPerNode: 8,
    source: 'NVIDIA H200 SXM datasheet (141 GB HBM3e, 989 TF bf16 dense, 4.8 TB/s, NVLink4 900 GB/s bidir); price: assumption ≈ AWS p5e.48xlarge ≈ $84.8/h ÷ 8',
  },
  l4: {
    name: 'l4',
    kind: 'gpu',
    memoryBytes: 23_034 * MiB,
    bf16Flops: 121e12,
    memBandwidthBytesPerS: 300e9,
    interconnectBytesPerS: 32e9,
    priceUsdPerHour: 0.71,
    devicesPerNode: 8,
    source: 'NVIDIA L4 datasheet (24 GB GDDR6, 121 TF bf16 dense, 300 GB/s, PCIe Gen4 x16 ≈ 32 GB/s each way); price GCP g2-standard-4 $0.71/h (1 L4 incl. VM)',
  },
  a10g: {
    name: 'a10g',
    kind: 'gpu',
    memoryBytes: 23_028 * MiB,
    bf16Flops: 70e12,
    memBandwidthBytesPerS: 600e9,
    interconnectBytesPerS: 32e9,
    priceUsdPerHour: 1.006,
    devicesPerNode: 8,
    source: 'AWS G5 docs (24 GB GDDR6, 600 GB/s); 70 TF bf16 dense is the commonly cited A10G tensor peak (AWS does not publish it); PCIe Gen4; price AWS g5.xlarge $1.006/h',
  },
  a6000: {
    name: 'a6000',
    kind: 'gpu',
    memoryBytes: 49_140 * MiB,
    bf16Flops: 154.8e12,
    memBandwidthBytesPerS: 768e9,
    interconnectBytesPerS: 32e9,
    priceUsdPerHour: 0.8,
    devicesPerNode: 8,
    source: 'NVIDIA RTX A6000 datasheet (48 GB GDDR6, 768 GB/s, 309.7 TF sparse ⇒ 154.8 dense); PCIe Gen4 (NVLink bridge pairs only); price Lambda on-demand $0.80/h',
  },
  rtx4090: {
    name: 'rtx4090',
    kind: 'gpu',
    memoryBytes: 24_564 * MiB,
    bf16Flops: 165.2e12,
    memBandwidthBytesPerS: 1_008e9,
    interconnectBytesPerS: 32e9,
    priceUsdPerHour: 0.69,
    devicesPerNode: 8,
    source: 'NVIDIA Ada whitepaper (RTX 4090: 165.2 TF bf16 dense with fp32 accumulate, 1,008 GB/s); PCIe Gen4, no P2P; price RunPod secure cloud ≈ $0.69/h (no hyperscaler offers it)',
  },
  mi300x: {
    name: 'mi300x',
    kind: 'gpu',
    memoryBytes: 192 * GiB,
    bf16Flops: 1_307.4e12,
    memBandwidthBytesPerS: 5_300e9,
    interconnectBytesPerS: 448e9,
    priceUsdPerHour: 6.0,
    devicesPerNode: 8,
    source: 'AMD Instinct MI300X datasheet (192 GB HBM3, 1,307.4 TF bf16 dense, 5.3 TB/s, 7 Infinity Fabric links × 64 GB/s each way); price: assumption ≈ $6/GPU-h (Azure ND MI300X v5 class)',
  },
  'xeon-amx': {
    name: 'xeon-amx',
    kind: 'cpu',
    memoryBytes: 384 * GiB,
    bf16Flops: 218e12,
    memBandwidthBytesPerS: 307e9,
    interconnectBytesPerS: 64e9,
    priceUsdPerHour: 4.84,
    devicesPerNode: 2,
    source: 'One Xeon Platinum 8480+ socket (Sapphire Rapids): AMX peak 56 cores × 2,048 bf16 FLOP/cycle × 1.9 GHz ≈ 218 TF; 8 × DDR5-4800 = 307 GB/s; 4 UPI links ≈ 64 GB/s; price/memory: AWS m7i.48xlarge (2 sockets, 768 GiB) $9.68/h ÷ 2',
  },
} as const satisfies Record<string, HardwareSpec>;
