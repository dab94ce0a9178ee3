#!/bin/bash
/work/main/target/lean/gpubench all --quick --device all --output gpus
