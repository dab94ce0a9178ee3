#!/usr/bin/env python3
"""The loop's table (scripts/sim/loop.sh): every figure the real run and the simulated runs
both state, by key, side by side, with the option of the export that carries it.

    loop.py GPUBENCH REAL_RUN OUT_DIR

Figures are read as gpubench reads them (`gpubench export DIR --format json`: keyed, older
formats migrated), from REAL_RUN and from each run directory under OUT_DIR. Writes
OUT_DIR/loop.md and OUT_DIR/loop.json.
"""
import json
import os
import subprocess
import sys

INTEGER_PIPELINE = (
    "the index's arithmetic runs on the simulator's integer pipeline: -ptx_opcode_latency_int"
    " sets its latency, not the time the simulator's issue and dispatch add to a chase"
)
# The option of the export that carries a figure, and where the simulator has none that can
# express the real GPU, what it lacks. A key not listed is set side by side with no option.
CARRIED = {
    "cache/global/1/latency": ("-gpgpu_l1_latency", None),
    "cache/l2/1/latency": ("-gpgpu_l2_rop_latency", None),
    "cache/shared/memory/latency": ("-gpgpu_smem_latency", None),
    "cache/constant/1/line": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/ways": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/sets": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/size": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/conflict-ways": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/conflict-way-size": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/fetch-granularity": ("-gpgpu_const_cache:l1", None),
    "cache/constant/1/latency": (
        None,
        "GPGPU-Sim has no option for the constant cache's hit latency (a hit costs what its"
        " pipeline does); the export writes none",
    ),
    "shared/banks/indexed-load-latency": (
        "-gpgpu_smem_latency",
        INTEGER_PIPELINE,
    ),
    "cache/global/index-chain": (None, INTEGER_PIPELINE),
    "shared/banks/conflict-cost": (
        None,
        "GPGPU-Sim replays a conflicting access one cycle per extra way; no option sets that cost",
    ),
}
# Rows keyed by their words (the rise's two footprints), carried by the same option: by prefix.
CARRIED_BY_PREFIX = [("cache/constant: level 1 rise", ("-gpgpu_const_cache:l1", None))]


def carrier(key):
    """The option that carries `key` and what the simulator lacks, or None where none does."""
    if key in CARRIED:
        return CARRIED[key]
    return next((c for prefix, c in CARRIED_BY_PREFIX if key.startswith(prefix)), None)


# What no option of the export carries, by the key's space and quantity: the loop keeps the
# base's value, so the simulated figure is the base's, not the real GPU's.
NOT_CARRIED = [
    (
        ("cache/l2/1/", "cache/l2: level 1 rise"),
        "-gpgpu_cache:dl2 is not exported (slices behind a hash); the loop keeps the base's reduced L2",
    ),
    (
        (
            "cache/global/1/capacity",
            "cache/global/1/size",
            "cache/global/1/fetch-granularity",
            "cache/global: level 1 rise",
        ),
        "-gpgpu_cache:dl1 is exported only where the conflict experiment identifies sets and ways",
    ),
    (
        ("cache/global/memory/", "cache/l2/memory/", "cache/constant/memory/"),
        "-dram_latency is not exported: a miss costs it plus the DRAM timing, which a chase does not separate",
    ),
]


def not_carried(key):
    for prefixes, why in NOT_CARRIED:
        if key.startswith(prefixes):
            return why
    return None


# A latency comes back within 2 cycles (the bar for what the export carries); any other
# figure within 5 % (compare's threshold), a count or a size exactly.
LATENCY_WITHIN = 2.0
RELATIVE_WITHIN = 0.05


def figures(gpubench, run):
    model = json.loads(
        subprocess.run(
            [gpubench, "export", run, "--format", "json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    return {
        f["key"]: f
        for f in model["figures"]
        if f.get("status") == "figure" and isinstance(f.get("value"), (int, float))
    }


def verdict(real, simulated, lacks):
    difference = simulated["value"] - real["value"]
    if real["unit"] == "cycles" and "latency" in real["quantity"]:
        back = abs(difference) <= LATENCY_WITHIN
    elif real["unit"] in ("cycles", "GB/s", "bytes/clock/SM"):
        back = abs(difference) <= RELATIVE_WITHIN * abs(real["value"])
    else:
        back = simulated["value"] == real["value"]
    if back:
        return "came back"
    return "differs: " + (lacks or "cause not named")


def main():
    gpubench, real_run, out = sys.argv[1:]
    real = figures(gpubench, real_run)
    rows = []
    for name in sorted(os.listdir(out)):
        run = os.path.join(out, name)
        if not (os.path.isdir(run) and os.path.isfile(os.path.join(run, "metadata.json"))):
            continue
        try:
            simulated = figures(gpubench, run)
        except subprocess.CalledProcessError as error:
            print(f"{name}: no figures ({error.stderr.strip()})", file=sys.stderr)
            continue
        for key, s in simulated.items():
            r = real.get(key)
            if r is None or r["unit"] != s["unit"]:
                continue
            found = carrier(key)
            option, lacks = found or (None, None)
            base = not_carried(key) if found is None else None
            rows.append(
                {
                    "key": key,
                    "quantity": s["quantity"],
                    "unit": s["unit"],
                    "real": r["value"],
                    "simulated": s["value"],
                    "difference": s["value"] - r["value"],
                    "option": option,
                    "run": name,
                    "verdict": f"not carried: {base}" if base else verdict(r, s, lacks),
                }
            )
    rows.sort(key=lambda r: r["key"])
    with open(os.path.join(out, "loop.json"), "w") as f:
        json.dump({"real_run": real_run, "rows": rows}, f, indent=1)
    lines = [
        f"# The loop: {os.path.basename(os.path.abspath(real_run))}, exported, simulated, measured",
        "",
        "Written by `scripts/sim/loop.py`: every figure both the real run and a simulated run"
        " state (by key); a latency comes back within 2 cycles, another figure in cycles within"
        " 5 %, a count or a size exactly.",
        "",
        "| figure | real | simulated | difference | option | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['quantity']} (`{r['run']}`) | {r['real']:.1f} {r['unit']} |"
            f" {r['simulated']:.1f} {r['unit']} | {r['difference']:+.1f} |"
            f" {r['option'] or '-'} | {r['verdict']} |"
        )
    back = sum(r["verdict"] == "came back" for r in rows)
    carried = sum(not r["verdict"].startswith("not carried") for r in rows)
    lines += ["", f"{back} of the {carried} figures the export carries came back."]
    with open(os.path.join(out, "loop.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
