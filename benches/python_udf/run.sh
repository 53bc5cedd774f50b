#!/usr/bin/env bash
# Runs the Python-function scenarios (baseline.sql, general.sql, pandas.sql) on weir and, given
# FLINK_RUN (a flink_run.py that runs a script on Apache Flink through PyFlink) and FLINK_PYTHON
# (the Python that has PyFlink), on Flink in the same run, one after another at parallelism 1:
# wall time and peak memory (of the whole process tree: Flink's JVM included) of each.
#   benches/python_udf/run.sh                         # weir only
#   FLINK_RUN=…/flink_run.py FLINK_PYTHON=…/bin/python benches/python_udf/run.sh
# weir is the release binary (cargo build --release --bin weir); its Python functions import
# pandas and pyarrow from WEIR_PYTHON (default: the Python scripts/ensure-pyarrow prints).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
weir="$here/../../target/release/weir"
python="${WEIR_PYTHON:-$("$here/../../scripts/ensure-pyarrow")}"
cd "$here"
measure() { python3 "$here/measure_tree.py" "$@"; }
for scenario in baseline general pandas; do
    measure "weir  $scenario" "$weir" run "$scenario.sql" -p 1 -pyexec "$python"
    if [ -n "${FLINK_RUN:-}" ]; then
        PYTHONPATH="$here" measure "flink $scenario" "$FLINK_PYTHON" "$FLINK_RUN" "$scenario.sql" --parallelism 1
    fi
done
