#!/usr/bin/env python3
"""Runs a Flink SQL script on Apache Flink (PyFlink's local mini-cluster), statement after
statement, each INSERT to its end: the Flink side of `cargo bench --bench nexmark -- --flink PY`.

Usage: run_sql.py SCRIPT.sql PARALLELISM
"""
import re
import sys


def statements(text):
    """The statements of `text`: `--` comments dropped, split at `;` outside quotes."""
    out, current, quote = [], [], None
    for line in text.splitlines():
        i = 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == quote:
                    quote = None
            elif c in "'`\"":
                quote = c
            elif line.startswith("--", i):
                break
            elif c == ";":
                out.append("".join(current).strip())
                current = []
                i += 1
                continue
            current.append(c)
            i += 1
        current.append("\n")
    out.append("".join(current).strip())
    return [s for s in out if s]


def main():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    script, parallelism = sys.argv[1], sys.argv[2]
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", parallelism)
    for statement in statements(open(script).read()):
        setting = re.fullmatch(r"SET\s+'([^']+)'\s*=\s*'([^']*)'", statement, re.IGNORECASE)
        if setting:
            # executeSql takes no SET (the SQL client's statement): the option goes to the config.
            env.get_config().set(setting.group(1), setting.group(2))
        elif statement.upper().startswith("INSERT"):
            env.execute_sql(statement).wait()
        else:
            env.execute_sql(statement)


if __name__ == "__main__":
    main()
