#!/usr/bin/env python3
"""Writes tests/conformance/nexmark_qN.sql: each Nexmark query of queries/ as it is, over the
events weir's `nexmark` connector wrote to tests/conformance/data/nexmark/events.json (a
filesystem table with the Nexmark schema, computed `dateTime` and watermark of ddl_gen.sql), its
blackhole sink turned into a print sink so the results can be compared with Apache Flink's.

Queries left out: q6 (Flink cannot run it), q12 (processing-time windows: the result depends on
the clock). q10 writes partitioned files: its case (tests/partitioned/nexmark_q10.sql) runs the
query as it is, with `${NEXMARK_DIR}` a new directory per run, under checkpoints (Flink commits
files only on checkpoints), then reads the files back into a print sink.

q13 reads data/side_input.txt (the Nexmark side input: 10 000 rows `i,i`) through the legacy
`'connector.type' = 'filesystem'` options, with `${FLINK_HOME}` set to `.`; Flink takes only an
absolute `file:///` URI there, so its run substitutes the absolute path of tests/conformance.

q14 calls the Java UDF `com.github.nexmark.flink.udf.CountChar`; for Flink's run, compile
flink/CountChar.java against PyFlink's jars and put the jar on `HADOOP_CLASSPATH` (the
mini-cluster's class path):
    javac --release 11 -cp "$PYFLINK/lib/*" -d classes flink/CountChar.java && jar cf count-char.jar -C classes .
    HADOOP_CLASSPATH=count-char.jar flink_run.py nexmark_q14.sql --parallelism 2

Regenerate the events with `weir run benches/nexmark/generate_events.sql --parallelism 1` (from
the repository root), then the cases with this script, then Flink's outputs with
`flink_run.py nexmark_qN.sql --parallelism 2` in tests/conformance.
"""

import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE.parent.parent / "tests" / "conformance"
LEFT_OUT = {6, 10, 12}
PARTITIONED = CASES.parent / "partitioned"

# The file variant's table (ddl_files.sql) over the conformance events.
TABLE = (HERE / "ddl_files.sql").read_text().replace("${EVENTS_PATH}", "data/nexmark/events.json")


def main():
    views = (HERE / "queries" / "ddl_views.sql").read_text().replace("${NEXMARK_TABLE}", "datagen")
    for n in range(23):
        if n in LEFT_OUT:
            continue
        query = (HERE / "queries" / f"q{n}.sql").read_text().replace("${FLINK_HOME}", ".")
        sink = re.search(r"CREATE TABLE (\w+) \([^;]*'connector' = 'blackhole'", query).group(1)
        printed = query.replace(
            "'connector' = 'blackhole'", f"'connector' = 'print',\n  'print-identifier' = '{sink}'"
        )
        assert printed != query, f"q{n} has no blackhole sink"
        header = f"-- Nexmark q{n} over 3000 generated events (benches/nexmark/conformance_cases.py).\n"
        (CASES / f"nexmark_q{n}.sql").write_text(header + TABLE + "\n" + views + "\n\n" + printed)
    q10 = (HERE / "queries" / "q10.sql").read_text()
    header = (
        "-- Nexmark q10 over 3000 generated events (benches/nexmark/conformance_cases.py): the query as it\n"
        "-- is, its files read back. ${NEXMARK_DIR} is a new directory for each run (tests/filesystem.rs).\n"
        "SET 'execution.checkpointing.interval' = '1s';\n\n"
    )
    read_back = """
CREATE TABLE q10_files (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR,
  dt STRING,
  hm STRING
) WITH ('connector' = 'print', 'print-identifier' = 'q10_files');

INSERT INTO q10_files SELECT * FROM nexmark_q10;
"""
    (PARTITIONED / "nexmark_q10.sql").write_text(header + TABLE + "\n" + views + "\n\n" + q10 + read_back)


if __name__ == "__main__":
    main()
