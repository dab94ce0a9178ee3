"""The table of scripts/peers-mt4g.sh: MT4G's figures beside gpubench's, quantity by quantity.

    python3 scripts/peers_mt4g_table.py OUTPUT_DIR MT4G_COMMIT SECONDS_PER_GROUP COMMAND

Reads OUTPUT_DIR/gpubench/summary.json, OUTPUT_DIR/mt4g/GROUP.json and groups.tsv; writes
OUTPUT_DIR/mt4g.md and OUTPUT_DIR/mt4g.json. A quantity one side does not state is shown as
such, never filled in from the other.
"""

import csv
import json
import os
import re
import sys

GIB = 1 << 30

# MT4G's kernel behind each latency figure (its JSON path).
LATENCY_KERNELS = {
    "l1/latency": "l1LatencyKernel",
    "l2/latency": "l2LatencyKernel",
    "constant/l1/latency": "constantL1LatencyKernel",
    "constant/l1.5/latency": "constantL15LatencyKernel",
    "readOnly/latency": "readOnlyLatencyKernel",
    "texture/latency": "textureLatencyKernel",
    "shared/latency": "sharedMemoryLatencyKernel",
    "main/latency": "mainMemoryLatencyKernel",
}
MEMORY_OP = re.compile(r"^(@!?U?P\d+\s+)?(LDG|LDC|ULDC|LDS|LD|TLD|TEX|LDL)\b")

# (MT4G group, path in its JSON under "memory", gpubench summary quantity, what is compared)
ROWS = [
    ("l1", "l1/latency", "global: level 1 latency", "L1 latency"),
    ("l1", "l1/size", "global: level 1 size", "L1 size"),
    ("l1", "l1/lineSize", "global: level 1 line", "L1 line"),
    ("l1", "l1/fetchGranularity", "global: level 1 fetch granularity (stride sweep)", "L1 fetch granularity"),
    ("l2", "l2/latency", "l2: level 1 latency", "L2 latency (ld.global.cg)"),
    ("l2", "l2/segmentSize", "l2: level 1 size", "L2 segment (first level) size"),
    ("l2", "l2/lineSize", "l2: level 1 line", "L2 line"),
    ("l2", "l2/fetchGranularity", "l2: level 1 fetch granularity (stride sweep)", "L2 fetch granularity"),
    ("l2", "l2/readBandwidth", "l2 read (at the l2 read search's winner)", "L2 read bandwidth"),
    ("l2", "l2/readBandwidth", "l2 shared-line read (at the l2 shared-line read search's winner)",
     "L2 read bandwidth (gpubench: lines shared by SMs)"),
    ("l2", "l2/writeBandwidth", "l2 write (at the l2 write search's winner)", "L2 write bandwidth"),
    ("constant", "constant/l1/latency", "constant: level 1 latency", "constant L1 latency"),
    ("constant", "constant/l1/latency", "constant-uniform: level 1 latency",
     "constant L1 latency (gpubench: warp-uniform index, ULDC)"),
    ("constant", "constant/l1/size", "constant: level 1 size", "constant L1 size"),
    ("constant", "constant/l1/lineSize", "constant: level 1 line", "constant L1 line"),
    ("constant", "constant/l1/fetchGranularity", "constant: level 1 fetch granularity (stride sweep)",
     "constant L1 fetch granularity"),
    ("constant", "constant/l1.5/latency", "constant: slowest level latency",
     "constant L1.5 latency (gpubench: slowest level within 64 KiB)"),
    ("readonly", "readOnly/latency", "readonly: level 1 latency", "read-only (ld.global.nc) latency"),
    ("readonly", "readOnly/size", "readonly: level 1 size", "read-only cache size"),
    ("readonly", "readOnly/lineSize", "readonly: level 1 line", "read-only line"),
    ("texture", "texture/latency", "texture: level 1 latency", "texture latency"),
    ("texture", "texture/size", "texture: level 1 size", "texture cache size"),
    ("texture", "texture/lineSize", "texture: level 1 line", "texture line"),
    ("shared", "shared/latency", "shared: slowest level latency", "shared-memory load latency (by address)"),
    ("shared", "shared/latency",
     "indexed load latency (4 B, no conflict; the word index is scaled on the chain)",
     "shared-memory load latency (gpubench: index scaled on the chain)"),
    ("memory", "main/latency", "l2: slowest level latency", "DRAM latency"),
    ("memory", "main/readBandwidth", "dram read (at the dram read search's winner)", "DRAM read bandwidth"),
    ("memory", "main/writeBandwidth", "dram write (at the dram write search's winner)", "DRAM write bandwidth"),
]


def mt4g_value(doc, path):
    """MT4G's figure as (value in gpubench's unit, unit, note), or None."""
    node = doc.get("memory", {})
    for key in path.split("/"):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    if not isinstance(node, dict):
        return None
    unit = node.get("unit", "")
    if "p50" in node:
        return node["p50"], "cycles", f"median of {node.get('measurements', '?')} loads"
    if "size" in node:
        conf = node.get("confidence")
        note = "" if conf is None else f"confidence {conf:.2f}"
        return float(node["size"]), "bytes", note
    if "value" in node and unit == "GiB/s":
        return node["value"] * GIB / 1e9, "GB/s", ""
    if "value" in node:
        return node["value"], unit, ""
    return None


def timed_windows(sass_path):
    """For each MT4G latency kernel, the instructions between the two clock reads around its
    first timed load (the kernel's SASS as built), and that kernel's whole SASS."""
    windows, listings = {}, []
    if not os.path.exists(sass_path):
        return windows, listings
    for function in re.split(r"\n\s*Function : ", "\n" + open(sass_path).read())[1:]:
        name = function.split("\n", 1)[0].strip()
        kernel = next((k for k in LATENCY_KERNELS.values() if re.search(rf"\d{k}", name)), None)
        if kernel is None:
            continue
        # cuobjdump's lines end in " ;" and an encoding; the listing this writes keeps neither.
        lines = [m for m in (re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*(?:;|$)", line)
                             for line in function.split("\n")) if m]
        listings.append(f"Function : {name}\n" + "".join(f"/*{m.group(1)}*/ {m.group(2)}\n" for m in lines))
        code = [m.group(2).strip() for m in lines]
        clocks = [i for i, op in enumerate(code) if "SR_CLOCK" in op]
        for start, end in zip(clocks, clocks[1:]):
            # c[0x0] is the kernel's parameter bank, not the timed load.
            if any(MEMORY_OP.match(op) and "c[0x0]" not in op for op in code[start + 1:end]):
                windows[kernel] = [op.split()[0] if not op.startswith("@") else " ".join(op.split()[:2])
                                   for op in code[start:end + 1] if op != "NOP"]
                break
    return windows, listings


def unstated(ours, quantity):
    """Why gpubench gives no figure: its level names the geometry it could not identify."""
    space = quantity.split(":")[0]
    if f"{space}: level 1 geometry not identifiable from this sweep" in ours:
        return "not identifiable from its sweep (candidates tie)"
    return "not stated by this run"


def show(value, unit):
    if value is None:
        return "-"
    if unit == "bytes":
        return f"{value:.0f} B" if value < 4096 else f"{value / 1024:.1f} KiB"
    if unit == "GB/s":
        return f"{value / 1e3:.2f} TB/s"
    return f"{value:.1f} {unit}"


def main():
    out, commit, limit, command = sys.argv[1:5]
    summary = json.load(open(f"{out}/gpubench/summary.json"))
    ours = {f["quantity"]: f for f in summary["figures"]}
    groups = {}
    for group, status, seconds in csv.reader(open(f"{out}/mt4g/groups.tsv"), delimiter="\t"):
        path = f"{out}/mt4g/{group}.json"
        doc = json.load(open(path)) if status == "0" and os.path.exists(path) else None
        groups[group] = {"status": int(status), "seconds": int(seconds), "doc": doc}

    # The whole binary's SASS while the script runs; afterwards (tables made again from a
    # finished run) the listing of the latency kernels it kept.
    built = f"{out}/build/mt4g.sass"
    windows, listings = timed_windows(built if os.path.exists(built) else f"{out}/mt4g/latency-kernels.sass")
    if listings:
        open(f"{out}/mt4g/latency-kernels.sass", "w").write("\n".join(listings))
    rows = []
    for group, path, quantity, what in ROWS:
        run = groups.get(group)
        theirs = mt4g_value(run["doc"], path) if run and run["doc"] else None
        if run is None:
            missing = "not run"
        elif run["status"] == 124:
            missing = f"no result within {limit} s"
        elif run["doc"] is None:
            missing = f"exit status {run['status']}"
        else:
            missing = "not in its output"
        figure = ours.get(quantity)
        value = figure["value"] if figure else None
        rows.append({
            "quantity": what,
            "mt4g": theirs[0] if theirs else None,
            "mt4g_unit": theirs[1] if theirs else None,
            "mt4g_note": theirs[2] if theirs else missing,
            "gpubench": value,
            "gpubench_unit": figure["unit"] if figure else None,
            "gpubench_quantity": quantity,
            "gpubench_uncertainty": figure["uncertainty"] if figure else unstated(ours, quantity),
            "ratio": value / theirs[0] if theirs and value and theirs[0] else None,
            "mt4g_timed_window": windows.get(LATENCY_KERNELS.get(path)),
        })

    gpu = open(f"{out}/mt4g/gpu.csv").read().strip().splitlines()[-1]
    with open(f"{out}/mt4g.md", "w") as md:
        md.write(f"# gpubench beside MT4G\n\nGPU: {gpu}\n\n")
        md.write(f"MT4G commit {commit}, built with nvcc through scripts/peers/hip/; each MT4G group "
                 f"ran in its own process, at most {limit} s: "
                 + ", ".join(f"{g} {r['seconds']} s" + ("" if r["status"] == 0 else f" (exit {r['status']})")
                             for g, r in groups.items())
                 + ". gpubench: `all --only` over the cache spaces, shared memory and bandwidth "
                   "(`gpubench/`). Latencies are MT4G's median load and gpubench's plateau median; "
                   "bandwidths are each tool's best (MT4G's GiB/s converted to TB/s). The ratio is "
                   "gpubench / MT4G.\n\n")
        md.write("| quantity | MT4G | gpubench | gpubench row | ratio | MT4G's timed window (SASS) |\n"
                 "|---|---|---|---|---|---|\n")
        for r in rows:
            theirs = show(r["mt4g"], r["mt4g_unit"])
            if r["mt4g_note"]:
                theirs = f"{theirs} ({r['mt4g_note']})" if r["mt4g"] is not None else r["mt4g_note"]
            mine = show(r["gpubench"], r["gpubench_unit"])
            if r["gpubench_uncertainty"]:
                mine = f"{mine} ({r['gpubench_uncertainty']})" if r["gpubench"] is not None \
                    else r["gpubench_uncertainty"]
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
            window = " ".join(r["mt4g_timed_window"]) if r["mt4g_timed_window"] else ""
            md.write(f"| {r['quantity']} | {theirs} | {mine} | `{r['gpubench_quantity']}` | {ratio} | {window} |\n")
        md.write(f"\nCommand: scripts/peers-mt4g.sh {command}\n")
    json.dump({"gpu": gpu, "mt4g_commit": commit, "seconds_per_group": int(limit),
               "groups": {g: {k: v for k, v in r.items() if k != "doc"} for g, r in groups.items()},
               "rows": rows}, open(f"{out}/mt4g.json", "w"), indent=2)
    print(open(f"{out}/mt4g.md").read())


if __name__ == "__main__":
    main()
