#!/usr/bin/env python3
"""Writes the expected outputs of the Kafka cases in this folder by running them on Apache Flink
2.3 with Flink's own Kafka connector and formats, beside weir, over the same topics of a real
Apache Kafka broker.

Each case CASE.sql has a write part (before the line `-- read`) that fills the topic `{topic}`
and a read part that reads it back into a print sink; `-- partitions: N` gives the topic's
partitions. For each case:

  CASE.records        the records Flink's encoders wrote (partition, timestamp, key, value,
                      headers, in hex), which the tests load into a topic for weir to read
  CASE.flink.out      what Flink's read part prints over those records: weir must print the same
                      (tests/kafka_flink.rs, at parallelism 1, 2 and 4)
  CASE.weir.records   the records weir's encoders write for the same write part: the tests check
                      weir still writes them
  CASE.flink-of-weir.out  what Flink's read part prints over weir's records (the same as
                      CASE.flink.out unless Flink reads weir's bytes otherwise; the tests check
                      that they are equal)

Usage (from the project root, with PyFlink 2.3 and confluent-kafka in FLINK_PYTHON's environment,
and weir built: `cargo build --bin weir`):

  FLINK_PYTHON=~/.cache/weir-oracle/venv/bin/python FLINK_RUN=…/flink_run.py \\
      $FLINK_PYTHON tests/kafka_flink/bless.py [CASE …]
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_broker(work):
    port = free_port()
    log = open(os.path.join(work, "broker.log"), "w")
    proc = subprocess.Popen([os.path.join(ROOT, "scripts/kafka-broker"), os.path.join(work, "broker"), str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    bootstrap = f"127.0.0.1:{port}"
    from confluent_kafka.admin import AdminClient
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=1).brokers:
                return proc, bootstrap
        except Exception:
            pass
        time.sleep(0.3)
    sys.exit("the Kafka broker did not start: see " + log.name)


def create_topic(bootstrap, topic, partitions):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result()


def dump(bootstrap, topic):
    """Every record of `topic` as a line: partition, timestamp, key, value, headers (hex; `-`: none)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bless", "enable.auto.commit": False,
                  "isolation.level": "read_committed", "enable.partition.eof": True})
    lines = []
    for p in sorted(c.list_topics(topic, timeout=10).topics[topic].partitions):
        low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        if high <= low:
            continue
        c.assign([TopicPartition(topic, p, low)])
        while True:
            m = c.poll(5)
            if m is None:
                continue
            if m.error():
                break
            hex_or = lambda b: "-" if b is None else (b.hex() or "''")
            headers = ",".join(f"{k}={hex_or(v)}" for k, v in (m.headers() or [])) or "-"
            lines.append(f"{p}\t{m.timestamp()[1]}\t{hex_or(m.key())}\t{hex_or(m.value())}\t{headers}")
    c.close()
    return lines


def parts(case):
    text = open(os.path.join(HERE, case + ".sql")).read()
    head, _, rest = text.partition("\n")
    partitions = int(head.split(":")[1])
    write, _, read = rest.partition("-- read\n")
    return partitions, write, read


def fill(sql, topic, bootstrap):
    return sql.replace("{topic}", topic).replace("{bootstrap}", bootstrap)


def flink(work, sql, jars):
    path = os.path.join(work, "flink.sql")
    open(path, "w").write(sql)
    run = subprocess.run([os.environ["FLINK_PYTHON"], os.environ["FLINK_RUN"], path, "--jars", jars],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"Flink failed:\n{sql}\n{run.stderr[-3000:]}")
    return run.stdout


def weir(work, sql):
    path = os.path.join(work, "weir.sql")
    open(path, "w").write(sql)
    run = subprocess.run([os.environ.get("WEIR", os.path.join(ROOT, "target/debug/weir")), "run", path],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"weir failed:\n{sql}\n{run.stderr[-3000:]}")


def main():
    cases = sys.argv[1:] or sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".sql"))
    jars = subprocess.run([os.path.join(ROOT, "scripts/ensure-flink-kafka-jars")], check=True,
                          capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as work:
        broker, bootstrap = start_broker(work)
        try:
            for case in cases:
                partitions, write, read = parts(case)
                ours, theirs = f"{case}-weir", f"{case}-flink"
                create_topic(bootstrap, theirs, partitions)
                create_topic(bootstrap, ours, partitions)
                flink(work, fill(write, theirs, bootstrap), jars)
                open(os.path.join(HERE, case + ".records"), "w").write("\n".join(dump(bootstrap, theirs)) + "\n")
                expected = flink(work, fill(read, theirs, bootstrap), jars)
                open(os.path.join(HERE, case + ".flink.out"), "w").write(expected)
                weir(work, fill(write, ours, bootstrap))
                open(os.path.join(HERE, case + ".weir.records"), "w").write("\n".join(dump(bootstrap, ours)) + "\n")
                of_weir = flink(work, fill(read, ours, bootstrap), jars)
                open(os.path.join(HERE, case + ".flink-of-weir.out"), "w").write(of_weir)
                same = sorted(expected.splitlines()) == sorted(of_weir.splitlines())
                how = "as its own" if same else "DIFFERENTLY from its own"
                print(f"{case}: Flink reads weir's records {how}")
        finally:
            broker.terminate()
            broker.wait()


if __name__ == "__main__":
    main()
