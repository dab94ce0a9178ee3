# ReFrame regression test: every GPU of a node characterised by `gpubench all --quick --device
# all`, its summary turned into ReFrame performance variables, each checked against the
# reference of its GPU model. A node whose GPUs fall outside the references fails.
#
#   reframe -C reframe/settings.py -c reframe/gpubench_check.py -r               # on a GPU node
#   reframe ... -S gpubench=/path/to/gpubench                                       # another binary
#   reframe ... -S replay=results/h100/all                                          # no GPU: re-report
#
# `replay` re-reports a committed run directory (`gpubench report`) instead of measuring, so
# the extraction and the references run end to end on a machine without a GPU (CI does this).
# On Slurm, the settings' `slurm` partition runs one node per job; `--dry-run` writes the job
# scripts without submitting them.

import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable

# Per GPU model: summary figure -> (ReFrame variable, reference, lower, upper bound as
# fractions). References are the committed runs' figures (results/h100/all, results/h200x2);
# the bounds are what a healthy card of the model stays within (compare's tolerances: 5 %,
# tighter where the figure is exact on every card seen).
FIGURES = {
    ('Clocks and timers', 'SM clock (measured)'): ('sm_clock', 'MHz', -0.02, 0.02),
    ('Divergence', 'single loop: cost per divergent lane'): ('divergence_cost', 'cycles', -0.05, 0.05),
    ('Shared memory', 'load latency (4 B, no conflict)'): ('shared_latency', 'cycles', -0.05, 0.05),
    ('Pipeline', 'fp32 fma latency'): ('fma_latency', 'cycles', -0.05, 0.05),
    ('Pipeline', 'fp32 fma throughput'): ('fma_throughput', 'ops/clock/SM', -0.05, 0.05),
    ('Bandwidth', 'shared read per SM'): ('shared_bandwidth', 'bytes/clock/SM', -0.05, 0.05),
    ('Bandwidth', 'dram read: fraction of theoretical peak'): ('dram_read_fraction', '%', -0.05, 0.05),
    ('Memory hierarchy', 'global: level 1 latency'): ('l1_latency', 'cycles', -0.05, 0.05),
    ('Memory hierarchy', 'l2: slowest level latency'): ('dram_latency', 'cycles', -0.05, 0.05),
}

REFERENCES = {
    # results/h100/all.
    'NVIDIA H100 80GB HBM3': {
        'sm_clock': 1980.0,
        'divergence_cost': 13.0,
        'shared_latency': 29.02,
        'fma_latency': 4.39,
        'fma_throughput': 123.56,
        'shared_bandwidth': 125.79,
        'dram_read_fraction': 92.72,
        'l1_latency': 32.04,
        'dram_latency': 675.6,
    },
    # The mean of the two H200s in results/h200x2.
    'NVIDIA H200': {
        'sm_clock': 1978.9,
        'divergence_cost': 13.0,
        'shared_latency': 29.02,
        'fma_latency': 4.39,
        'fma_throughput': 123.58,
        'shared_bandwidth': 125.51,
        'dram_read_fraction': 94.05,
        'l1_latency': 32.05,
        'dram_latency': 648.8,
    },
}


@sn.deferrable
def figure(path, section, quantity):
    """The value of one figure of a gpubench summary.json.

    The summaries read are the ones `gpubench all` or `gpubench report` wrote in the stage
    directory just now, and every figure in them passed gpubench's domain check
    (src/report/domain.rs) on its way in; a run with a value outside its domain left no
    summary.json and fails the sanity check.
    """
    with open(path) as f:
        summary = json.load(f)
    for fig in summary['figures']:
        if fig['section'] == section and fig['quantity'] == quantity:
            return fig['value']
    raise ValueError(f'{path} has no figure {section}: {quantity}')


@rfm.simple_test
class GpubenchNode(rfm.RunOnlyRegressionTest):
    descr = 'gpubench all --quick --device all: every GPU of the node against its model'
    valid_systems = ['*']
    valid_prog_environs = ['*']
    gpubench = variable(str, value='gpubench')
    # A committed run directory to re-report instead of measuring (no GPU needed).
    replay = variable(str, value='')
    time_limit = '30m'
    tags = {'gpu', 'fleet'}

    @run_after('init')
    def set_command(self):
        if self.replay:
            self.executable = self.gpubench
            self.executable_opts = ['report', os.path.abspath(self.replay), '--output', 'gpus/gpu0']
            self.prerun_cmds = ['mkdir -p gpus']
        else:
            self.executable = self.gpubench
            self.executable_opts = ['all', '--quick', '--device', 'all', '--output', 'gpus']

    def summaries(self):
        """(name, GPU model, summary.json) of every GPU's run in the stage directory."""
        root = os.path.join(self.stagedir, 'gpus')
        runs = []
        # Nothing ran (a dry run writes the job script only).
        if not os.path.isdir(root):
            return runs
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name, 'summary.json')
            if not os.path.isfile(path):
                continue
            with open(path) as f:
                caption = json.load(f)['caption']
            model = next((m for m in REFERENCES if caption.startswith(m + ' (')), None)
            runs.append((name, model, path))
        return runs

    @sanity_function
    def every_gpu_summarised(self):
        runs = self.summaries()
        return sn.all([
            sn.assert_eq(self.job.exitcode, 0, msg='gpubench exited with {0}'),
            sn.assert_true(runs, msg='no GPU run left a summary.json'),
            *[sn.assert_true(model, msg=f'{name}: no reference for this GPU model')
              for name, model, _ in runs],
        ])

    @run_before('performance')
    def set_performance(self):
        self.perf_variables = {}
        references = {}
        for name, model, path in self.summaries():
            with open(path) as f:
                present = {(g['section'], g['quantity']) for g in json.load(f)['figures']}
            for (section, quantity), (var, unit, lower, upper) in FIGURES.items():
                # A suite left out (--skip) or failed: its figures are not checked.
                if (section, quantity) not in present:
                    continue
                key = f'{name}_{var}'
                self.perf_variables[key] = sn.make_performance_function(
                    figure(path, section, quantity), unit)
                if model is not None:
                    references[key] = (REFERENCES[model][var], lower, upper, unit)
        self.reference = {'*': references}
