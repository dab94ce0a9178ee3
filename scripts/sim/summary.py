#!/usr/bin/env python3
"""The answer keys side by side: results/sim/answer-keys.md from every results/sim/*/answer-key.json.

    scripts/sim/summary.py [RESULTS_SIM_DIR]

Per configuration: the capacity figures against the configuration, the latency offsets the
export's translation takes off (and what each run's would be if the constant were learned
without it: leave one configuration out), and the round trip; over all of them, the calibration
issue 50 asks for (among answers stated at confidence >= p, the share right).
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
