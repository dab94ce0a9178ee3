#!/usr/bin/env python3
"""The answer keys side by side: results/sim/answer-keys.md from every results/sim/*/answer-key.json.

    scripts/sim/summary.py [RESULTS_SIM_DIR]

Per configuration: the capacity figures against the configuration, the latency offsets the
export's translation takes off (and what each run's would be if the constant were learned
without it: leave one configuration out), the round trip, and the shared-memory suite's bank
model where CONFIG/banks holds a run of it; over all of them, the calibration issue 50 asks for
(among answers stated at confidence >= p, the share right).
"""

import json
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "results/sim")
keys = {}
for path in sorted(root.glob("*/answer-key.json")):
    keys[path.parent.name] = json.loads(path.read_text())

lines = ["# GPGPU-Sim answer keys, side by side", "",
         "Written by `scripts/sim/summary.py` from each `*/answer-key.json` (`scripts/sim/answer_key.py`).", "",
         "## Capacities (the chase's figure: the largest footprint with no miss)", "",
         "| configuration | space | configured | gpubench | verdict |", "|---|---|---|---|---|"]
for name, key in keys.items():
    for row in key["rows"]:
        if row["parameter"] == "capacity (bytes)":
            lines.append(f"| {name} | {row['space']} | {row['config']} | {row['gpubench']} | {row['verdict']} |")

lines += ["", "## Latency: what a chase adds to each option", "",
          "Offset = gpubench's hit latency less the configuration's option; left out = the run's "
          "error after the translation were the constant the mean of the other configurations' offsets.", "",
          "| option | configuration | option's value | gpubench | offset | error, left out |", "|---|---|---|---|---|---|"]
offsets = {}
for name, key in keys.items():
    for row in key["rows"]:
        if row["parameter"].startswith("hit latency (cycles) vs "):
            option = row["parameter"].split(" vs ")[1]
            # An L2 hit crosses the interconnect twice: its offset is learned per interconnect
            # (the export's L2_CHASE_OVER_OPTION_BY_NETWORK), and left out within it.
            if option == "-gpgpu_l2_rop_latency":
                option += f" (-network_mode {key['config_options']['-network_mode']})"
            offsets.setdefault(option, []).append((name, float(row["config"]), row["gpubench"]))
for option, seen in offsets.items():
    for name, configured, measured in seen:
        others = [m - c for n, c, m in seen if n != name]
        left_out = (f"{measured - configured - sum(others) / len(others):+.1f}" if others else "-")
        lines.append(f"| {option} | {name} | {configured:.0f} | {measured} | {measured - configured:+.1f} | {left_out} |")
    mean = sum(m - c for _, c, m in seen) / len(seen)
    lines.append(f"| {option} | mean of {len(seen)} |  |  | {mean:+.2f} |  |")

lines += ["", "## The round trip (options a measurement determines)", "",
          "| configuration | option | exported | configuration's | verdict |", "|---|---|---|---|---|"]
for name, key in keys.items():
    for row in key.get("round_trip", []):
        if row["measured"]:
            lines.append(f"| {name} | {row['option']} | {row['exported']} | {row['config']} | {row['verdict']} |")

# The shared-memory suite (`gpubench shared`, scripts/sim/run-suite.sh into CONFIG/banks): its
# wavefront model assumes 32 banks of 4 bytes; GPGPU-Sim charges one cycle of initiation
# interval per access a bank serves (abstract_hardware_model.cc: "shared memory conflicts
# modeled as larger initiation interval"), so the configured cost per extra way is 1 cycle.
banks = []
for path in sorted(root.glob("*/banks/shared.json")):
    name = path.parent.parent.name
    shared = json.loads(path.read_text())
    options = json.loads((path.parent.parent / "banks.sim.json").read_text())["options"]
    banks.append((name, shared, options))
if banks:
    lines += ["", "## Shared-memory banks (`gpubench shared`)", "",
              "The suite fits cycles = conflict-free latency + cost x (wavefronts - minimum) with "
              "wavefronts counted over 32 banks of 4 bytes (its model, not read from the "
              "configuration); GPGPU-Sim charges one cycle per extra access to a bank.", "",
              "| configuration | -gpgpu_shmem_num_banks | cost per extra way: configured | gpubench (95 % CI) "
              "| model residual RMS over the points | indexed load, 4 B | -gpgpu_smem_latency | verdict |",
              "|---|---|---|---|---|---|---|---|"]
    for name, shared, options in banks:
        fit = shared["fit"]
        way = fit["cycles_per_extra_way"]
        right = abs(way["estimate"] - 1.0) < 0.05 and options.get("-gpgpu_shmem_num_banks") == "32"
        lines.append(
            f"| {name} | {options.get('-gpgpu_shmem_num_banks')} | 1 | {way['estimate']:.3f} "
            f"({way['ci95_low']:.3f}..{way['ci95_high']:.3f}) | {fit['residual_rms_cycles']:.1e} cycles, "
            f"{fit['points']} points | {shared['load_latency_cycles']:.1f} | {options.get('-gpgpu_smem_latency')} "
            f"| {'right: 32 banks fit to the cycle, one cycle a way' if right else 'differs'} |")

lines += ["", "## Calibration over every configuration", "",
          "Answers gpubench states with a confidence (capacity by model fit, line, ways, sets, fetch granularity).", "",
          "| stated at confidence >= p | answers | right | share right |", "|---|---|---|---|"]
for p in (0.0, 0.5, 0.9):
    stated = right = 0
    for key in keys.values():
        for c in key.get("calibration", []):
            if c["p"] == p:
                stated += c["stated"]
                right += c["right"]
    share = f"{right / stated:.2f}" if stated else "-"
    lines.append(f"| {p} | {stated} | {right} | {share} |")
(root / "answer-keys.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
