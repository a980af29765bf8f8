#!/usr/bin/env bash
# Runs the real SplitwiseSim and llmfleet's splitwise-baseline scenario on the SAME trace file and compares
# them request by request (docs/fidelity/splitwise-compare.md).
#
#   bench/splitwisesim-compare.sh SPLITWISE_SIM_DIR [TRACE_CSV] [OUT_DIR]
#
# SPLITWISE_SIM_DIR: a checkout of github.com/Mutinifni/splitwise-sim (its *.py, configs/ and data/perf_model.csv,
#   which must equal our data/profiles/splitwise_perf_model.csv). Python needs pandas, numpy, scipy, networkx and
#   omegaconf (Debian: apt-get install python3-pandas python3-scipy python3-networkx python3-omegaconf); hydra is
#   NOT needed: a minimal stand-in (hydra.main / hydra.utils.instantiate / get_original_cwd) and a runner that
#   composes the baseline config are written to a temporary directory below.
# TRACE_CSV: a SplitwiseSim trace; generated (80 req/s Poisson, 600 s, Azure conv lengths, seed 1) if absent.
# OUT_DIR: default /tmp/splitwisesim-compare. PYTHON overrides the interpreter (default /usr/bin/python3);
# SERVERS the number of DGX-H100 servers in both simulators (default 40).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then sed -n '2,13p' "$0"; exit 2; fi
SWS=$(cd "$1" && pwd)
OUT=${3:-/tmp/splitwisesim-compare}
TRACE=${2:-$OUT/trace-80rps-600s.csv}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"
for f in run.py instance.py scheduler.py performance_model.py data/perf_model.csv configs/hardware_repo/processors/h100-80gb.yaml; do
  [ -e "$SWS/$f" ] || { echo "error: $SWS/$f not found (expected a splitwise-sim checkout)" >&2; exit 2; }
done
if ! cmp -s "$SWS/data/perf_model.csv" data/profiles/splitwise_perf_model.csv; then
  echo "warning: $SWS/data/perf_model.csv differs from data/profiles/splitwise_perf_model.csv" >&2
fi
[ -f "$TRACE" ] || node --import tsx bench/splitwisesim-compare.ts trace "$TRACE" 80 600 1

SHIM=$(mktemp -d)
trap 'rm -rf "$SHIM"' EXIT
mkdir -p "$SHIM/hydra"
cat > "$SHIM/hydra/__init__.py" <<'EOF'
# Minimal stand-in for hydra: only what SplitwiseSim's modules import.
def main(*args, **kwargs):
    def deco(fn):
        return fn
    return deco
EOF
cat > "$SHIM/hydra/utils.py" <<'EOF'
# hydra.utils stand-ins. instantiate follows hydra's defaults: _target_ is imported and called with the other
# keys; nested configs with a _target_ are instantiated recursively; other nested configs stay OmegaConf
# objects (hydra's default _convert_="none"), so attribute access such as overheads.run keeps working.
import importlib
import os

from omegaconf import DictConfig, ListConfig

_ORIGINAL_CWD = os.environ.get("SWS_ORIGINAL_CWD", os.getcwd())


def get_original_cwd():
    return _ORIGINAL_CWD


def to_absolute_path(path):
    return path if os.path.isabs(path) else os.path.join(_ORIGINAL_CWD, path)


def _locate(target):
    module_name, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module_name), attr)


def _value(v):
    if isinstance(v, DictConfig) and "_target_" in v:
        return instantiate(v)
    if isinstance(v, ListConfig) and any(isinstance(x, DictConfig) and "_target_" in x for x in v):
        return [_value(x) for x in v]
    return v


def instantiate(cfg, **kwargs):
    target = _locate(cfg["_target_"])
    args = {k: _value(cfg[k]) for k in cfg.keys() if k != "_target_"}
    args.update(kwargs)
    return target(**args)
EOF
cat > "$SHIM/run_baseline.py" <<'EOF'
# Composes, without hydra, the config hydra builds from configs/config.yaml for SplitwiseSim's baseline:
# cluster=dgx-h100 (40 servers) performance_model=db start_state=baseline (Splitwise instance, 512 seqs,
# 2,048 tokens, 4 preemptions, TP 8) router=noop (zero overheads) arbiter=noop, one application (llama2-70b,
# llama2-70b-fp16, allocator noop, scheduler token_jsq); then calls run.run_simulation(cfg) in OUT_DIR
# (hydra would chdir to its output dir). Usage: run_baseline.py SIM_DIR TRACE OUT_DIR
import os
import random
import sys

sim_dir, trace_path, out_dir = (os.path.abspath(p) for p in sys.argv[1:4])
os.environ["SWS_ORIGINAL_CWD"] = sim_dir
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, sim_dir)
from omegaconf import OmegaConf  # noqa: E402

cfg = OmegaConf.create({
    "end_time": 86400, "seed": 0, "debug": False,
    "trace": {"path": trace_path},
    "hardware_repo": {"processors": "configs/hardware_repo/processors", "skus": "configs/hardware_repo/skus",
                      "interconnects": "configs/hardware_repo/interconnects"},
    "model_repo": {"architectures": "configs/model_repo/architectures", "sizes": "configs/model_repo/sizes"},
    "orchestrator_repo": {"allocators": "configs/orchestrator_repo/allocators",
                          "schedulers": "configs/orchestrator_repo/schedulers"},
    "performance_model": {"_target_": "performance_model.DatabasePerformanceModel", "db_path": "data/perf_model.csv"},
    "power_model": {"_target_": "power_model.ConstantPowerModel",
                    "idle_power": {"a100-80gb": 63, "h100-80gb": 75},
                    "prompt_power": {"a100-80gb": 400, "h100-80gb": 700},
                    "token_power": {"a100-80gb": 250, "h100-80gb": 380}},
    "cluster": {"power_budget": 232000,
                "servers": [{"sku": "dgx-a100", "count": 0}, {"sku": "dgx-h100", "count": int(os.environ.get("SERVERS", "40"))}],
                "interconnects": [{"link": "infiniband", "topology": "p2p"}]},
    "router": {"_target_": "router.NoOpRouter", "overheads": {"routing_delay": 0}},
    "arbiter": {"_target_": "arbiter.NoOpArbiter", "overheads": {}},
    "applications": [{"application_id": 0, "model_architecture": "llama2-70b", "model_size": "llama2-70b-fp16",
                      "allocator": "noop", "scheduler": "token_jsq", "overheads": {}, "debug": False,
                      "_target_": "application.Application"}],
    "start_state": {"state_type": "baseline", "application_id": 0,
                    "instance": {"instance_type": "Splitwise", "max_batch_size": 512, "max_batch_tokens": 2048,
                                 "max_preemptions": 4, "pipeline_parallelism": 1, "tensor_parallelism": 8}},
})
os.makedirs(out_dir, exist_ok=True)
os.chdir(out_dir)
if os.path.exists("oom.csv"):
    os.remove("oom.csv")
random.seed(cfg.seed)
import run  # noqa: E402  SplitwiseSim's run.py
run.run_simulation(cfg)
EOF

echo "== SplitwiseSim ($PY) on $TRACE"
rm -rf "$OUT/splitwisesim"
/usr/bin/time -f '%e %M' -o "$OUT/splitwisesim.time" "$PY" "$SHIM/run_baseline.py" "$SWS" "$TRACE" "$OUT/splitwisesim"
read -r SW_WALL SW_RSS < "$OUT/splitwisesim.time"
echo "== llmfleet on $TRACE"
rm -rf "$OUT/llmfleet"
/usr/bin/time -f '%e %M' -o "$OUT/llmfleet.time" node bin/llmfleet.js simulate --scenario scenarios/splitwise-baseline.yaml \
  --set "fleet.pools.0.count=${SERVERS:-40}" --trace "$TRACE" --trace-format splitwise --out "$OUT/llmfleet" > "$OUT/llmfleet.log"
read -r LF_WALL LF_RSS < "$OUT/llmfleet.time"
LF_SIM=$(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')).sim.wallSeconds)" "$OUT/llmfleet/summary.json")
echo
node --import tsx bench/splitwisesim-compare.ts compare "$OUT/splitwisesim/detailed/0.csv" "$OUT/llmfleet/requests.csv"
echo
echo "wall seconds (whole process): SplitwiseSim $SW_WALL s (peak RSS $((SW_RSS / 1024)) MB), llmfleet $LF_WALL s (peak RSS $((LF_RSS / 1024)) MB)"
echo "llmfleet simulation alone (summary.json sim.wallSeconds): $LF_SIM s"
node -e "const [a,b,c]=process.argv.slice(1).map(Number); console.log('speed ratio: ' + (a/b).toFixed(1) + '× whole process, ' + (a/c).toFixed(0) + '× simulation alone')" "$SW_WALL" "$LF_WALL" "$LF_SIM"
echo "load average while measured: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
