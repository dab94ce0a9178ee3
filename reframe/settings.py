# ReFrame site configuration for gpubench's regression test: `local` runs on this machine
# (a workstation, CI, or one node of a cluster by hand); `cluster:gpu` submits one job per node
# through Slurm (edit `access` for your partition and account; `--dry-run` writes the job
# scripts without submitting them).

site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'this machine',
            'hostnames': ['.*'],
            'partitions': [
                {
                    'name': 'default',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['builtin'],
                },
            ],
        },
        {
            'name': 'cluster',
            'descr': 'GPU nodes behind Slurm (select with --system cluster:gpu)',
            'hostnames': ['^$'],
            'partitions': [
                {
                    'name': 'gpu',
                    'scheduler': 'slurm',
                    'launcher': 'local',
                    # Every GPU of the node: set the count to your nodes' (and add
                    # --partition / --account as your site needs).
                    'access': ['--nodes=1', '--exclusive', '--gres=gpu:8'],
                    'environs': ['builtin'],
                },
            ],
        },
    ],
    'environments': [
        {'name': 'builtin', 'cc': 'cc', 'cxx': '', 'ftn': ''},
    ],
}
