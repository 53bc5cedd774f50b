#!/usr/bin/env python3
"""Writes tests/functions/fuzz_calls.txt: random built-in function calls and what Apache Flink 2.3 returns.

A differential fuzzer's oracle side. Run it with the Python of a PyFlink 2.3 installation (the
oracle's virtual environment), from anywhere:

    $V/bin/python tests/functions/fuzz.py [OUTPUT] [--sample N] [--batch N]

OUTPUT defaults to fuzz_calls.txt next to this script. `--sample N` evaluates only every k-th call
(about N in all; to measure speed), `--batch N` sets how many calls share one Flink job (default 150).
Progress goes to stderr. A full run takes about half an hour on two cores.

The calls come from per-function signature templates whose arguments are drawn from typed pools
mixing random values with edge values (zero, -0.0, NaN and infinities, INT/BIGINT extremes,
DECIMALs near rounding boundaries, month/year ends, leap days, pre-epoch and far timestamps,
DST gaps and folds, unicode and regex metacharacters, nested and invalid JSON, NULLs of each
type), with a seeded random generator, so every run writes the same calls in the same order. In
some calls an argument reads the column `x` (the constant 1) so that Flink cannot fold the call
while planning.

The file has the format of calls.txt: `# family` lines, then `call<TAB>result` lines where the
result is Flink's `CAST(call AS STRING)` value, `null`, or `!ERROR first line of Flink's message`
(for a failure while running, the message of its root cause); tabs, newlines and backslashes in
results are written `\\t`, `\\n`, `\\\\`. Each call is evaluated as
`SELECT CAST(call AS STRING) FROM (VALUES (1)) AS t(x)`: validated alone first (no job), then
run with other valid calls as columns of one SELECT; a batch that fails is split in halves until
the failing calls stand alone. Jobs run on one long-lived local mini cluster.
"""
import collections, math, os, random, re, sys, threading, time

SEED = 20261207
WRAP_P = 0.1  # share of drawn values that read `x`, so the call cannot be folded while planning


# ---------------------------------------------------------------------------------------------
# literals and pools

def q(s):
    """A SQL character literal."""
    return "'" + s.replace("'", "''") + "'"


def null(t):
    return f"CAST(NULL AS {t})"


def wrap_case(v):
    return f"CASE WHEN x = 1 THEN {v} END"


def wrap_int(v):
    return f"(x * 0 + {v})"


class Pool:
    """Values of one SQL type: edge values, a random generator, and NULL now and then."""

    def __init__(self, typ, edges, gen=None, null_p=0.05, edge_p=0.5, wrap=wrap_case):
        self.typ, self.edges, self.gen, self.null_p, self.edge_p, self.wrap = typ, edges, gen, null_p, edge_p, wrap

    def draw(self, rng, wrap=True, null_ok=True):
        if null_ok and rng.random() < self.null_p:
            v = null(self.typ)
        elif self.gen is None or rng.random() < self.edge_p:
            v = rng.choice(self.edges)
            while isinstance(v, Rare) and rng.random() < 0.9:
                v = rng.choice(self.edges)
        else:
            v = self.gen(rng)
        if wrap and self.wrap and rng.random() < WRAP_P:
            v = self.wrap(v)
        return v


def mix(*weighted):
    """A pool drawing from other pools by weight: mix((3, INT), (1, DOUBLE))."""
    total = sum(w for w, _ in weighted)

    class Mix:
        def draw(self, rng, wrap=True, null_ok=True):
            r = rng.random() * total
            for w, p in weighted:
                r -= w
                if r <= 0:
                    return p.draw(rng, wrap, null_ok)
            return weighted[-1][1].draw(rng, wrap, null_ok)

    return Mix()


def dlit(v):
    """A DOUBLE literal for a Python float."""
    if v != v:
        return "CAST('NaN' AS DOUBLE)"
    if v in (math.inf, -math.inf):
        return "CAST('Infinity' AS DOUBLE)" if v > 0 else "CAST('-Infinity' AS DOUBLE)"
    r = repr(v)
    if "e" in r:
        m, e = r.split("e")
        return f"{m}E{int(e)}"
    return r + "E0"


class Rare(str):
    """An edge value drawn a tenth as often as the others."""


def rng_rare(v):
    return Rare(v)


def gen_int(rng):
    k = rng.random()
    if k < 0.5:
        return str(rng.randint(-12, 12))
    if k < 0.85:
        return str(rng.randint(-1000, 1000))
    return str(rng.randint(-2 ** 31 + 1, 2 ** 31 - 1))


def gen_bigint(rng):
    k = rng.random()
    if k < 0.4:
        return f"CAST({rng.randint(-1000, 1000)} AS BIGINT)"
    if k < 0.7:
        return str(rng.choice([1, -1]) * rng.randint(2 ** 31, 2 ** 50))
    return f"CAST({rng.randint(-2 ** 63 + 1, 2 ** 63 - 1)} AS BIGINT)"


def gen_double(rng):
    k = rng.random()
    if k < 0.3:
        return dlit(round(rng.uniform(-100, 100), rng.randint(0, 3)))
    if k < 0.5:
        return dlit(float(rng.randint(-20, 20)) + rng.choice([0.0, 0.5, 0.25, 0.125, 0.1]))
    if k < 0.8:
        return dlit(rng.choice([1, -1]) * 10 ** rng.uniform(-12, 12))
    return dlit(rng.choice([1, -1]) * rng.uniform(0, 1) * 10 ** rng.randint(-300, 300))


def gen_decimal(rng):
    """A DECIMAL literal: random digits, or a value near a rounding boundary."""
    k = rng.random()
    sign = "-" if rng.random() < 0.35 else ""
    if k < 0.45:
        ip = str(rng.randint(0, 10 ** rng.randint(0, 9)))
        scale = rng.randint(1, 8)
        fp = "".join(rng.choice("0123456789") for _ in range(scale))
        return f"{sign}{ip}.{fp}"
    if k < 0.85:
        ip = str(rng.choice([0, 1, 2, 9, 12, 99, 125, 1249, 1250, 1350, 2500, 9999, rng.randint(0, 100000)]))
        tail = rng.choice(["5", "49", "50", "51", "05", "45", "495", "499", "995", "005", "0", "4999", "5001", "25",
                           "75", "125", "375"])
        return f"{sign}{ip}.{tail}"
    p = rng.randint(1, 38)
    s = rng.randint(0, p)
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, p - s))) or "0"
    frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, s)))
    text = f"{sign}{digits}{'.' + frac if frac else ''}"
    # a numeric literal of more than 19 digits is out of range; such values come from text
    return f"CAST({q(text) if p > 18 else text} AS DECIMAL({p}, {s}))"


INT = Pool("INT", ["0", "1", "-1", "2", "-2", "3", "5", "-5", "7", "-7", "10", "42", "100", "-100", "255", "1000",
                   "2147483647", "CAST(-2147483648 AS INT)", "2147483646", "-2147483647", "65536"],
           gen_int, wrap=wrap_int)
BIGINT = Pool("BIGINT", ["CAST(0 AS BIGINT)", "CAST(1 AS BIGINT)", "CAST(-1 AS BIGINT)", "9223372036854775807",
                         "CAST(-9223372036854775808 AS BIGINT)", "2147483648", "-2147483649", "4294967296",
                         "CAST(123456789012 AS BIGINT)", "1000000000000", "9007199254740993"], gen_bigint,
              wrap=wrap_int)
TINYINT = Pool("TINYINT", ["CAST(0 AS TINYINT)", "CAST(127 AS TINYINT)", "CAST(-128 AS TINYINT)", "CAST(1 AS TINYINT)",
                           "CAST(-1 AS TINYINT)"], lambda r: f"CAST({r.randint(-128, 127)} AS TINYINT)")
SMALLINT = Pool("SMALLINT", ["CAST(0 AS SMALLINT)", "CAST(32767 AS SMALLINT)", "CAST(-32768 AS SMALLINT)",
                             "CAST(-1 AS SMALLINT)"], lambda r: f"CAST({r.randint(-32768, 32767)} AS SMALLINT)")
NAN, INF, NINF, NEGZ = ("CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)", "CAST('-Infinity' AS DOUBLE)",
                        "CAST('-0.0' AS DOUBLE)")
DOUBLE = Pool("DOUBLE", ["0.0E0", "-0.0E0", NEGZ, "1.0E0", "-1.0E0", "0.5E0", "-0.5E0", "1.5E0", "2.5E0", "-2.5E0",
                         "0.1E0", "1.0E308", "1.7976931348623157E308", "4.9E-324", "2.2250738585072014E-308",
                         "1.0E-10", "123.456E0", "1.0E16", "1.0E20", "-1.0E20", "3.141592653589793E0", "0.125E0",
                         "9.995E0", "1.005E0", NAN, INF, NINF, NAN, INF, NINF], gen_double)
FLOAT = Pool("FLOAT", ["CAST(1.5 AS FLOAT)", "CAST(0.1 AS FLOAT)", "CAST(3.4E38 AS FLOAT)", "CAST('-0.0' AS FLOAT)",
                       "CAST(16777217 AS FLOAT)", "CAST(-2.5 AS FLOAT)", "CAST(1.0E-7 AS FLOAT)", "CAST(0 AS FLOAT)",
                       "CAST(2.5 AS FLOAT)", "CAST(-1 AS FLOAT)", "CAST(123.456 AS FLOAT)", "CAST(0.5E0 AS FLOAT)",
                       # Flink fails planning a call with a constant NaN or infinite FLOAT: keep them rare
                       rng_rare("CAST('NaN' AS FLOAT)"), rng_rare("CAST('Infinity' AS FLOAT)")],
             lambda r: f"CAST({dlit(round(r.uniform(-1000, 1000), r.randint(0, 4)))} AS FLOAT)")
DECIMAL = Pool("DECIMAL(10, 2)",
               ["0.5", "-0.5", "1.5", "2.5", "-2.5", "0.49", "-0.49", "1.49", "1.45", "2.675", "0.005", "0.015",
                "-0.015", "0.125", "12.345", "-12.345", "123.456", "-123.456", "99.95", "999.999", "9.995", "0.00",
                "0.0001", "1234567.891", "-1234567.891", "1250.0", "1249.99", "-1250.0", "150.5", "-150.5", "15.0",
                "1234567890123456.78", "0.12345678901234567", "CAST('12345678901234567.89' AS DECIMAL(19, 2))", "CAST(2.5 AS DECIMAL(10, 2))",
                "CAST(-155.55 AS DECIMAL(5, 2))", "CAST(1.23456789 AS DECIMAL(38, 18))",
                "CAST(12345 AS DECIMAL(5, 0))", "CAST(999.5 AS DECIMAL(4, 1))", "CAST(-0.5 AS DECIMAL(1, 1))",
                "CAST(0.995 AS DECIMAL(3, 3))", "CAST(5 AS DECIMAL(1, 0))",
                "CAST('99999999999999999999999999999999999999' AS DECIMAL(38, 0))",
                "CAST('-9999999999999999999999999999.9999999999' AS DECIMAL(38, 10))",
                "CAST('0.12345678901234567890123456789012345678' AS DECIMAL(38, 38))"], gen_decimal)
NUM = mix((4, INT), (2, BIGINT), (1, TINYINT), (1, SMALLINT), (4, DOUBLE), (1, FLOAT), (5, DECIMAL))
EXACT = mix((4, INT), (2, BIGINT), (1, TINYINT), (1, SMALLINT), (5, DECIMAL))
SMALL = Pool("INT", ["0", "1", "-1", "2", "3", "4", "5", "-2", "-3", "10", "100", "2147483647",
                     "CAST(-2147483648 AS INT)"], lambda r: str(r.randint(-4, 14)), wrap=wrap_int)
PADN = Pool("INT", ["0", "1", "-1", "2", "3", "5", "-2", "10", "100", "CAST(-2147483648 AS INT)"],
            lambda r: str(r.randint(-4, 14)), wrap=wrap_int)
DIGITS = Pool("INT", ["-3", "-2", "-1", "0", "1", "2", "3", "4"], None, null_p=0.02, wrap=None)
BOOL = Pool("BOOLEAN", ["TRUE", "FALSE", "NOT TRUE", "1 < 2", "1 > 2"], None, null_p=0.15)

ALPHABET = "abcdefxyzABCXYZ0123456789 ,.-_%:/=&?é中😀'ß"


def gen_str(rng):
    k = rng.random()
    n = rng.randint(0, 14)
    if k < 0.6:
        return q("".join(rng.choice(ALPHABET) for _ in range(n)))
    if k < 0.85:
        return q(" ".join(rng.choice(["foo", "Bar", "BAZ", "qux", "é", "中文", "a_b", "x%y", "", "hello", "WORLD"])
                          for _ in range(rng.randint(1, 4))))
    return q(rng.choice("ab中😀 ") * rng.randint(0, 40))


STR = Pool("STRING", ["''", "' '", "'   '", "'hello'", "'Hello World'", "'  padded  '", "'é'", "'ünï©ødé'",
                      "'中文字符串'", "'😀'", "'a😀b'", "'emoji 😀 and 中文'", "'a%b_c'", "'100%'", "'under_score'",
                      "'.*+?^$[](){}|\\'", "'a.b.c'", "'a,b,,c'", "'x'", "'abcabcabc'", "'ABC def GHI'", "'it''s'",
                      "'12345'", "'-12.5'", "'MiXeD cAsE wOrDs'", "'hello-world foo_bar'", "'ß'", "'ǅungla'",
                      q("abcdefghij" * 30), "'aaa'", "'xyzxyz'", "'a\\b'", "'ab ab ab'"], gen_str)
STRNN = Pool("STRING", STR.edges, gen_str, null_p=0.0)
SQ_EDGES = ["''", "'a'", "'b'", "'ab'", "'l'", "'lo'", "'z'", "' '", "'é'", "'中'", "'😀'", "'%'", "'_'", "'.'", "','",
            "'abc'", "'xyz'", "'Hello'", "'o W'", "'aa'"]
SUBSTR = Pool("STRING", SQ_EDGES, lambda r: q("".join(r.choice("abcxyzlo é中,") for _ in range(r.randint(1, 3)))))


def rand_date(rng):
    k = rng.random()
    if k < 0.5:
        y = rng.randint(1960, 2040)
    elif k < 0.9:
        y = rng.randint(1583, 2200)
    else:
        y = rng.randint(1, 9999)
    m = rng.randint(1, 12)
    dim = [31, 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    d = rng.choice([1, dim, rng.randint(1, dim), rng.randint(1, dim)])
    return y, m, d


def rand_time(rng, digits=None):
    h, mi, s = rng.choice([(0, 0, 0), (23, 59, 59), (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)),
                           (rng.randint(0, 23), 0, 0), (rng.randint(0, 23), rng.randint(0, 59), 0)])
    if digits is None:
        digits = rng.choice([0, 0, 3, 3, 6, 9])
    frac = ""
    if digits:
        f = rng.choice(["0" * digits, "9" * digits, "".join(rng.choice("0123456789") for _ in range(digits))])
        frac = "." + f
    return f"{h:02d}:{mi:02d}:{s:02d}{frac}"


def date_text(rng):
    y, m, d = rand_date(rng)
    return f"{y:04d}-{m:02d}-{d:02d}"


def ts_text(rng):
    return f"{date_text(rng)} {rand_time(rng)}"


TS_EDGE_TEXT = ["2024-02-29 13:45:30.123", "2023-02-28 23:59:59.999", "2024-12-31 23:59:59.999", "2024-01-31 00:00:00",
                "1970-01-01 00:00:00", "1969-12-31 23:59:59.999", "2000-01-01 00:00:00", "1900-03-01 12:00:00",
                "0001-01-01 00:00:00", "9999-12-31 23:59:59.999", "2024-03-10 02:30:00", "2024-11-03 01:30:00",
                "2021-01-03 00:00:00", "2020-12-31 12:00:00", "2024-04-01 00:00:00", "2024-01-01 00:00:00",
                "2024-02-29 13:00:00", "2024-07-01 00:00:00", "2023-12-31 23:59:59", "1999-12-31 23:59:59.999999",
                "2024-03-31 02:30:00", "2024-10-27 02:30:00", "1582-10-15 00:00:00", "1582-10-04 12:00:00",
                "2038-01-19 03:14:07", "2024-06-15 12:30:45.5", "2024-02-29 00:00:00.000000001", "1600-02-29 06:00:00"]
DATE_EDGE_TEXT = ["2024-02-29", "2023-02-28", "2024-12-31", "2024-01-31", "1970-01-01", "1969-12-31", "2000-01-01",
                  "1900-03-01", "0001-01-01", "9999-12-31", "2021-01-03", "2020-12-31", "2024-04-01", "2024-01-01",
                  "2023-01-01", "2024-03-31", "1582-10-15", "1582-10-04", "2100-02-28", "2000-02-29", "2024-11-30"]
TS = Pool("TIMESTAMP(3)", [f"TIMESTAMP '{t}'" for t in TS_EDGE_TEXT], lambda r: f"TIMESTAMP '{ts_text(r)}'")
DATE = Pool("DATE", [f"DATE '{t}'" for t in DATE_EDGE_TEXT], lambda r: f"DATE '{date_text(r)}'")
TIME = Pool("TIME(0)", ["TIME '00:00:00'", "TIME '23:59:59'", "TIME '12:00:00'", "TIME '13:45:30.123'"],
            lambda r: f"TIME '{rand_time(r, 0)}'")
TSSTR = Pool("STRING", [q(t) for t in TS_EDGE_TEXT] + ["'2024-02-30 00:00:00'", "'2024-02-29T13:45:30'",
                                                       "'2024-02-29'", "'garbage'", "''", "'2024-02-29 25:00:00'",
                                                       "' 2024-02-29 13:45:30 '", "'2024-2-9 3:4:5'"],
             lambda r: q(ts_text(r)))
DATESTR = Pool("STRING", [q(t) for t in DATE_EDGE_TEXT] + ["'2023-02-29'", "'2024-13-01'", "'2024-2-9'", "''",
                                                          "'20240229'", "'garbage'", "'2024-02-29 13:45:30'"],
               lambda r: q(date_text(r)))
EPOCH = Pool("BIGINT", ["0", "-1", "1", "86399", "86400", "951782400", "1709164800", "1700000000", "253402300799",
                        "-62135596800", "2147483647", "CAST(-2147483648 AS INT)", "1710052200", "1730611800",
                        "1700000000123", "-86400", "CAST(1711846800 AS BIGINT)", "1729990800"],
              lambda r: str(r.choice([r.randint(-2 ** 31, 2 ** 31), r.randint(0, 2 * 10 ** 9), r.randint(-10 ** 10, 10 ** 10)])),
              wrap=wrap_int)
EPOCH_MS = Pool("BIGINT", ["0", "-1", "1", "999", "1000", "-1000", "1709164800000", "1700000000123", "253402300799999",
                           "-62135596800000", "CAST(-9223372036854775808 AS BIGINT)", "9223372036854775807",
                           "1710052200000", "1730611800000"],
                lambda r: str(r.randint(-10 ** 13, 10 ** 13)), wrap=wrap_int)

# ---------------------------------------------------------------------------------------------
# families


def fn(name, *args):
    return f"{name}({', '.join(args)})"


UNARY_NUM = ["ABS", "SIGN", "SQRT", "LN", "LOG10", "LOG2", "EXP", "CEIL", "FLOOR", "SIN", "COS", "TAN", "ATAN", "ASIN",
             "ACOS", "COT", "SINH", "COSH", "TANH", "DEGREES", "RADIANS", "CEILING"]


def numeric(rng):
    k = rng.random()
    if k < 0.30:
        return fn(rng.choice(UNARY_NUM), NUM.draw(rng))
    if k < 0.48:
        f = rng.choice(["ROUND", "TRUNCATE"])
        v = rng.choice([DECIMAL, DECIMAL, DECIMAL, DOUBLE, INT, BIGINT, FLOAT, TINYINT]).draw(rng)
        r = rng.random()
        if r < 0.06:
            return fn(f, v)
        if r < 0.1:
            return fn(f, v, wrap_int(rng.choice(DIGITS.edges)))
        return fn(f, v, DIGITS.draw(rng))
    if k < 0.58:
        return fn("MOD", EXACT.draw(rng), EXACT.draw(rng))
    if k < 0.68:
        return fn("POWER", NUM.draw(rng), NUM.draw(rng))
    if k < 0.76:
        return fn("LOG", NUM.draw(rng), NUM.draw(rng))
    if k < 0.84:
        return fn("ATAN2", NUM.draw(rng), NUM.draw(rng))
    if k < 0.88:
        return fn(rng.choice(["BIN", "HEX"]), mix((3, INT), (2, BIGINT), (1, TINYINT)).draw(rng))
    if k < 0.91:
        return fn(rng.choice(["ROUND", "TRUNCATE"]), rng.choice(["CAST(NULL AS DECIMAL(10, 2))", DECIMAL.draw(rng)]),
                  rng.choice(["-3", "-2", "-1", "0", "1", "2"]))
    if k < 0.95:
        return rng.choice(["-", "+"]) + NUM.draw(rng, wrap=False)
    return fn(rng.choice(["PI", "E"])) if rng.random() < 0.1 else fn(rng.choice(UNARY_NUM), NUM.draw(rng))


ARITH_OPERANDS = mix((4, INT), (2, BIGINT), (1, TINYINT), (1, SMALLINT), (3, DOUBLE), (1, FLOAT), (5, DECIMAL))


def arithmetic(rng):
    op = rng.choice(["+", "-", "*", "/", "%", "+", "-", "*", "/"])
    operands = EXACT if op == "%" and rng.random() < 0.9 else ARITH_OPERANDS  # Flink has no % of approximate numbers
    a = operands.draw(rng)
    b = operands.draw(rng)
    if op in "/%" and rng.random() < 0.35:
        # a zero divisor of an exact type fails while running; keep those rare
        b = rng.choice(["0.0E0", "-0.0E0", NEGZ, "0.0", "CAST(0 AS DECIMAL(5, 2))", "0"]) if rng.random() < 0.12 else b
    if b.startswith("-"):
        b = f"({b})"
    if rng.random() < 0.1:
        c = ARITH_OPERANDS.draw(rng)
        if c.startswith("-"):
            c = f"({c})"
        return f"{a} {op} {b} {rng.choice(['+', '*', '-'])} {c}"
    if rng.random() < 0.08:
        return f"{rng.choice(['-', '+'])}({a} {op} {b})"
    return f"{a} {op} {b}"


CMP_NUM = mix((3, INT), (2, BIGINT), (1, SMALLINT), (5, DOUBLE), (1, FLOAT), (4, DECIMAL),
              (2, Pool("DOUBLE", [NAN, INF, NINF, NEGZ, "0.0E0", "0", "0.0"], None, null_p=0.1)))
CMP_KINDS = [(6, CMP_NUM, CMP_NUM), (2, STR, STR), (1, DATE, DATE), (1, TS, TS), (1, BOOL, BOOL), (0.3, TS, DATE),
             (0.3, TIME, TIME)]


def cmp_pair(rng):
    total = sum(w for w, _, _ in CMP_KINDS)
    r = rng.random() * total
    for w, a, b in CMP_KINDS:
        r -= w
        if r <= 0:
            return a, b
    return CMP_NUM, CMP_NUM


def comparison(rng, boolean=False):
    pa, pb = cmp_pair(rng)
    k = rng.random() * (0.8 if boolean else 1.0)
    if k < 0.45:
        return f"{pa.draw(rng)} {rng.choice(['=', '<>', '<', '<=', '>', '>='])} {pb.draw(rng)}"
    if k < 0.62:
        neg = rng.choice(["", "NOT ", ""])
        sym = rng.choice(["", "", "", "", "ASYMMETRIC ", "SYMMETRIC "])
        return f"{pa.draw(rng)} {neg}BETWEEN {sym}{pb.draw(rng)} AND {pb.draw(rng)}"
    if k < 0.8:
        n = rng.randint(1, 5)
        items = ", ".join(pb.draw(rng) for _ in range(n))
        return f"{pa.draw(rng)} {rng.choice(['IN', 'NOT IN'])} ({items})"
    n = rng.randint(1, 4)
    return fn(rng.choice(["GREATEST", "LEAST"]), *[pb.draw(rng) for _ in range(n)])


CAST_TARGETS_NUM = ["TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(5, 2)", "DECIMAL(10, 0)",
                    "DECIMAL(3, 3)", "DECIMAL(38, 10)", "DECIMAL(1, 0)", "DECIMAL(20, 4)", "DECIMAL(38, 0)",
                    "DECIMAL(4, 1)", "DECIMAL"]
CAST_TARGETS_TEXT = ["STRING", "VARCHAR(3)", "CHAR(5)", "CHAR(1)", "VARCHAR(10)", "BYTES", "BINARY(2)"]
CAST_TARGETS_TIME = ["DATE", "TIME", "TIME(3)", "TIMESTAMP", "TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(9)",
                     "TIMESTAMP_LTZ(3)"]
CAST_STR = Pool("STRING", ["'42'", "' 42 '", "'+5'", "'-0'", "'4.7'", "'-4.5'", "'1e3'", "'1.5E-3'", "'0x1F'",
                           "'9999999999'", "'2147483648'", "'-2147483649'", "'127'", "'128'", "'NaN'", "'Infinity'",
                           "'-Infinity'", "'inf'", "'abc'", "''", "' '", "'true'", "'TRUE'", "'false'", "'yes'", "'no'",
                           "'1'", "'0'", "'t'", "'f'", "'y'", "'n'", "'on'", "'2024-02-29'", "'2023-02-29'",
                           "'2024-2-9'", "'2024-02-29T10:00:00'", "'2024-02-29 25:00:00'", "'  2024-01-01  '",
                           "'0001-01-01'", "'9999-12-31 23:59:59.999999999'", "'1969-12-31 23:59:59.999'",
                           "'13:45:30'", "'13:45'", "'24:00:00'", "'2024-02-29 13:45:30.123456789'", "'123.4567'",
                           "'00012.50'", "'1,000'", "'.5'", "'5.'", "'-.5'", "'1e400'", "'中文'", "'12345678901234567890'",
                           "'0.000000000001'", "'2024-02-29 13:45'", "'2024-02-29 13:45:30 '"],
                lambda r: rng_numtext(r))


def rng_numtext(r):
    k = r.random()
    if k < 0.4:
        return q(str(r.randint(-10 ** r.randint(1, 12), 10 ** r.randint(1, 12))))
    if k < 0.7:
        return q(f"{r.uniform(-1000, 1000):.{r.randint(0, 6)}f}")
    if k < 0.85:
        return q(ts_text(r))
    return q(date_text(r))


def cast(rng):
    kind = "CAST" if rng.random() < 0.55 else "TRY_CAST"
    k = rng.random()
    if k < 0.4:
        src = NUM.draw(rng)
        t = rng.choice(CAST_TARGETS_NUM * 2 + ["STRING", "VARCHAR(3)", "CHAR(5)", "BOOLEAN", "STRING"])
    elif k < 0.72:
        src = CAST_STR.draw(rng)
        t = rng.choice(CAST_TARGETS_NUM + ["BOOLEAN"] * 3 + CAST_TARGETS_TIME + ["STRING", "VARCHAR(3)", "CHAR(5)"])
        if kind == "CAST" and rng.random() < 0.5:
            kind = "TRY_CAST"  # invalid text fails a CAST while running; keep those rarer
    elif k < 0.8:
        src = BOOL.draw(rng)
        t = rng.choice(["INT", "TINYINT", "BIGINT", "DOUBLE", "DECIMAL(5, 2)", "STRING", "CHAR(3)", "VARCHAR(4)",
                        "FLOAT"])
    elif k < 0.88:
        src = TS.draw(rng)
        t = rng.choice(["DATE", "TIME", "TIME(3)", "TIMESTAMP(0)", "TIMESTAMP(6)", "TIMESTAMP(9)", "STRING",
                        "VARCHAR(10)", "TIMESTAMP_LTZ(3)", "BIGINT", "CHAR(25)"])
    elif k < 0.94:
        src = DATE.draw(rng)
        t = rng.choice(["TIMESTAMP", "TIMESTAMP(3)", "STRING", "VARCHAR(5)", "TIMESTAMP_LTZ(3)", "DATE", "INT"])
    else:
        src = STR.draw(rng)
        t = rng.choice(["BYTES", "VARCHAR(2)", "CHAR(4)", "STRING", "INT", "BOOLEAN", "DOUBLE"])
    return f"{kind}({src} AS {t})"


REGEX = ["'[0-9]+'", "'[a-z]+'", "'a|b'", "'^'", "'$'", "'.'", "'(\\w+)'", "'\\s+'", "'é'", "'(a)(b)?'", "'[aeiou]'",
         "'([a-z]+)([0-9]+)'", "'(.)\\1'", "'o'", "'l+'", "''", "'('", "'['", "'*'", "'.*'", "'^h'", "'d$'",
         "'[^a-z]'", "'(?i)HELLO'", "'\\d{2,}'", "'(x)|(y)'", "'中'", "'\\p{L}+'", "'%'", "'_'", "'\\.'", "'a{2}'"]
REPL = ["''", "'#'", "'$1'", "'[$0]'", "'\\\\'", "'x'", "'$2$1'", "'$'", "'é'", "'$9'"]
CHARSETS = ["'UTF-8'", "'US-ASCII'", "'ISO-8859-1'", "'UTF-16BE'", "'UTF-16LE'", "'UTF-16'", "'utf8'", "'bogus'"]


def string(rng):
    s = STR.draw(rng)
    n = SMALL.draw(rng)
    k = rng.randrange(44)
    if k == 0:
        return f"SUBSTRING({s} FROM {n} FOR {SMALL.draw(rng)})" if rng.random() < 0.5 else f"SUBSTRING({s} FROM {n})"
    if k in (1, 2):
        return fn(rng.choice(["SUBSTRING", "SUBSTR"]), s, n, *([SMALL.draw(rng)] if rng.random() < 0.7 else []))
    if k == 3:
        tail = f" FOR {SMALL.draw(rng)}" if rng.random() < 0.6 else ""
        return f"OVERLAY({s} PLACING {STR.draw(rng)} FROM {n}{tail})"
    if k == 4:
        return f"POSITION({SUBSTR.draw(rng)} IN {s})"
    if k == 5:
        return fn("LOCATE", SUBSTR.draw(rng), s, *([n] if rng.random() < 0.5 else []))
    if k in (6, 7):
        # no huge lengths: LPAD('x', 2147483647, 'y') exhausts the memory of Flink's JVM
        return fn(rng.choice(["LPAD", "RPAD"]), s, PADN.draw(rng), rng.choice(SQ_EDGES + [null("STRING"), "'xy'", "'-'"]))
    if k == 8:
        return fn("REPEAT", s, rng.choice(["0", "1", "2", "3", "-1", "5", null("INT"), wrap_int("2")]))
    if k == 9:
        return fn("REPLACE", s, SUBSTR.draw(rng), SUBSTR.draw(rng))
    if k in (10, 11):
        return fn("REGEXP_REPLACE", s, rng.choice(REGEX + [null("STRING")]), rng.choice(REPL + [null("STRING")]))
    if k in (12, 13):
        args = [s, rng.choice(REGEX + [null("STRING")])]
        if rng.random() < 0.75:
            args.append(rng.choice(["0", "1", "2", "3", "-1", null("INT")]))
        return fn("REGEXP_EXTRACT", *args)
    if k == 14:
        return fn("SPLIT_INDEX", s, rng.choice(["','", "' '", "''", "'ab'", "'.'", "'中'", null("STRING")]),
                  rng.choice(["0", "1", "2", "3", "-1", "10", null("INT")]))
    if k == 15:
        return fn("INSTR", s, SUBSTR.draw(rng))
    if k in (16, 17):
        return fn(rng.choice(["LEFT", "RIGHT"]), s, n)
    if k == 18:
        how = rng.choice(["BOTH", "LEADING", "TRAILING"])
        ch = rng.choice(["' '", "'a'", "'x'", "'ab'", "''", "'é'", "'😀'", null("STRING")])
        return rng.choice([f"TRIM({how} {ch} FROM {s})", f"TRIM({s})", f"TRIM({how} FROM {s})", f"TRIM({ch} FROM {s})"])
    if k == 19:
        return fn(rng.choice(["LTRIM", "RTRIM", "BTRIM"]), s, *([rng.choice(SQ_EDGES)] if rng.random() < 0.5 else []))
    if k in (20, 21):
        return fn("CONCAT", *[STR.draw(rng) for _ in range(rng.randint(1, 4))])
    if k in (22, 23):
        return fn("CONCAT_WS", rng.choice(["','", "''", "'-'", "' | '", null("STRING")]),
                  *[STR.draw(rng) for _ in range(rng.randint(1, 4))])
    if k == 24:
        return fn("INITCAP", s)
    if k == 25:
        return fn("REVERSE", s)
    if k == 26:
        return fn("ASCII", s)
    if k == 27:
        return fn("CHR", rng.choice(["0", "9", "32", "65", "97", "127", "128", "233", "255", "256", "20013", "-1",
                                     "1114111", str(rng.randint(0, 300)), null("INT")]))
    if k == 28:
        return fn(rng.choice(["UPPER", "LOWER", "CHAR_LENGTH", "CHARACTER_LENGTH"]), s)
    if k == 29:
        return f"{s} || {STR.draw(rng)}"
    if k in (30, 31):
        neg = rng.choice(["", "NOT "])
        pat = rng.choice(["'%'", "'_'", "'h%'", "'%o'", "'%l_o%'", "'a!%b' ESCAPE '!'", "'%!_%' ESCAPE '!'", "''",
                          "'%中%'", "'_😀_'", "'%\\%'", "'[a]%'", "'.*'", "'___'"])
        return f"{s} {neg}LIKE {pat}"
    if k == 32:
        return fn(rng.choice(["REGEXP", "REGEXP_COUNT"]), s, rng.choice(REGEX))
    if k == 33:
        return fn(rng.choice(["STARTSWITH", "ENDSWITH"]), s, SUBSTR.draw(rng))
    if k == 34:
        return fn("TRANSLATE", s, SUBSTR.draw(rng), SUBSTR.draw(rng))
    if k == 35:
        return fn("ELT", rng.choice(["1", "2", "3", "0", "4", null("INT")]), *[STR.draw(rng) for _ in range(3)])
    if k == 36:
        return fn("SPLIT", s, rng.choice(["','", "''", "' '", "'ab'", null("STRING")]))
    if k == 37:
        return fn(rng.choice(["REGEXP_SUBSTR", "REGEXP_INSTR", "REGEXP_EXTRACT_ALL"]), s, rng.choice(REGEX))
    if k == 38:
        return fn("STR_TO_MAP", rng.choice(["'a=1,b=2'", "'k:v;x:y'", "''", "'a=1,a=2'", "'a,b=,=c'", s]),
                  *(["';'", "':'"] if rng.random() < 0.4 else []))
    if k == 39:
        return fn("PRINTF", rng.choice(["'%s'", "'%d'", "'%5s|%-5s|'", "'%.2f'", "'%x'", "'%%'", "'%s-%s'"]),
                  *[rng.choice([STR, INT, DOUBLE]).draw(rng) for _ in range(rng.randint(1, 2))])
    if k == 40:
        return fn(rng.choice(["IS_ALPHA", "IS_DIGIT", "IS_DECIMAL"]), s)
    if k == 41:
        return f"SUBSTRING({s}, {rng.choice(['-1', '-2', '-5', '0', '-100'])}{', ' + SMALL.draw(rng) if rng.random() < 0.6 else ''})"
    if k == 42:
        pat = rng.choice(["'%(a|b)%'", "'h_llo'", "'[a-z]*'", "'%'", "'(中|é)+'", "'%l{2}%'"])
        return f"{s} {rng.choice(['SIMILAR TO', 'NOT SIMILAR TO'])} {pat}"
    return fn(rng.choice(["LPAD", "RPAD"]), s, rng.choice(["-1", "0", "1", "-5", "20"]), rng.choice(["''", "'ab'", "' '"]))


URL_MALFORMED = ["'not a url'", "''", "'http://'", "'://x'", "'http://exa mple.com/'", "'http://example.com:abc/'",
                 "'http://[::1'", "'http:/example.com'", "'//example.com/path'", "'example.com/path?q=1'",
                 "'http://example.com/a b?c=d e'", "'http://例子.测试/路径?键=值'", "'HTTP://EXAMPLE.COM/'",
                 "'http://user@:80'", "'?x=1'", "'#frag'", "'http://a.com?x=1?y=2'", "'http://a.com#x#y'"]


def url(rng):
    scheme = rng.choice(["http", "https", "ftp", "file", "mailto", "http", "https", "HTTPS"])
    keys = []
    if scheme == "mailto":
        u = f"mailto:{rng.choice(['user', 'first.last', 'a+b'])}@{rng.choice(['example.com', 'x.org'])}"
        if rng.random() < 0.5:
            u += "?subject=hi&body=a%20b"
            keys = ["subject", "body"]
        return u, keys
    if scheme == "file":
        return rng.choice(["file:///etc/hosts", "file://server/share/a.txt", "file:/tmp/x", "file:///C:/dir/f.txt",
                           "file:///a%20b/c?x=1#f", "file://localhost/home/user/"]), ["x"]
    userinfo = rng.choice(["", "", "user@", "user:pw@", "u%40x:p@", "anonymous:@", ":pw@"])
    host = rng.choice(["example.com", "www.example.co.uk", "127.0.0.1", "[::1]", "localhost", "sub-domain.example.org",
                       "EXAMPLE.COM", "xn--nxasmq6b.com", "a.b.c.d.e"])
    port = rng.choice(["", "", ":8080", ":80", ":0", ":65535", ":21"])
    path = rng.choice(["", "/", "/index.html", "/a/b/c", "/p%20q/r", "/a;param", "/dir/", "/a/../b", "/~user/x.php"])
    qparts = rng.choice([[], [], ["x=1"], ["x=1", "y=2"], ["a=", "b"], ["k=v=w"], ["x=1", "x=2"],
                         ["q=a%20b", "r=%E4%B8%AD"], ["arr[]=1"], ["=v"], [""], ["a=1", "", "b=2"]])
    query = ("?" + "&".join(qparts)) if qparts or rng.random() < 0.1 else ""
    keys = [p.split("=")[0] for p in qparts]
    frag = rng.choice(["", "", "", "#frag", "#", "#a=b", "#sec?x=1", "#%20f"])
    return f"{scheme}://{userinfo}{host}{port}{path}{query}{frag}", keys


URL_PARTS = ["'HOST'", "'PATH'", "'QUERY'", "'REF'", "'PROTOCOL'", "'AUTHORITY'", "'FILE'", "'USERINFO'"]


def parse_url(rng):
    if rng.random() < 0.1:
        u, keys = rng.choice(URL_MALFORMED), ["x", "q"]
    else:
        u, keys = url(rng)
        u = q(u)
    if rng.random() < 0.03:
        u = null("STRING")
    r = rng.random()
    if r < 0.3:
        key = rng.choice(keys + ["zz", "x", "", "X"]) if keys else rng.choice(["zz", "x", ""])
        keyarg = null("STRING") if rng.random() < 0.03 else q(key)
        return fn("PARSE_URL", u, "'QUERY'", keyarg)
    part = rng.choice(URL_PARTS * 6 + ["'host'", "'bogus'", null("STRING"), "''"])
    if rng.random() < 0.03:
        return fn("PARSE_URL", u, part, "'x'")
    return fn("PARSE_URL", u, part)


DATE_FORMATS = ["'yyyy-MM-dd'", "'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd HH:mm:ss.SSS'", "'dd/MM/yyyy'", "'MM/dd/yy'",
                "'yyyyMMdd'", "'HH:mm'", "'EEE'", "'EEEE, MMMM d, yyyy'", "'D'", "'w'", "'u'", "'hh:mm a'", "'S'",
                "'SS'", "'SSSSSS'", "'yyyy-MM-dd''T''HH:mm:ss'", "'YYYY-ww'", "'G yyyy'", "'yy'", "'MMM'", "'k:K'",
                "'H'", "'ss.SSS'", "'yyyy-MM-dd HH:mm:ss.SSSSSSSSS'", "'E dd MMM'", "'a'", "'x'", "'Z'", "'z'", "'XXX'",
                "'q'", "'yyyy/DDD'", "'''literal'''", "'F W'"]
PARSE_FORMATS = ["'yyyy-MM-dd'", "'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd HH:mm:ss.SSS'", "'dd/MM/yyyy'", "'yyyyMMdd'",
                 "'yyyy/MM/dd HH:mm'", "'MM-dd-yyyy'", "'yyyy-MM-dd''T''HH:mm:ss'", "'yyyy'", "'HH:mm:ss'",
                 "'yyyy-MM-dd HH:mm:ss.SSSSSS'", "'dd MMM yyyy'", "'yyyyMMddHHmmss'", "'yy-M-d'"]
UNITS_ADD = ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND"]
UNITS_EXTRACT = ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND",
                 "NANOSECOND", "DOY", "DOW", "ISODOW", "ISOYEAR", "EPOCH", "CENTURY", "DECADE", "MILLENNIUM"]
UNITS_FLOOR = ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MILLENNIUM",
               "CENTURY", "DECADE"]
BOUNDARY_TS = ["TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMP '2024-04-01 00:00:00'", "TIMESTAMP '2024-03-01 00:00:00'",
               "TIMESTAMP '2024-02-29 13:00:00'", "TIMESTAMP '2024-02-29 13:45:00'", "TIMESTAMP '2024-02-29 13:45:30'",
               "TIMESTAMP '2024-02-26 00:00:00'", "TIMESTAMP '2000-01-01 00:00:00'", "TIMESTAMP '1970-01-01 00:00:00'",
               "TIMESTAMP '1969-12-29 00:00:00'", "TIMESTAMP '2024-02-29 13:45:30.123'",
               "TIMESTAMP '1969-12-31 23:59:59.999'", "TIMESTAMP '2001-01-01 00:00:00'",
               "TIMESTAMP '2024-12-30 00:00:00'"]


def interval(rng):
    k = rng.random()
    n = rng.choice(["1", "2", "12", "13", "30", "31", "59", "60", "100", "365", "-1", "-13", "0"])
    if k < 0.7:
        unit = rng.choice(["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "DAY", "MONTH"])
        return f"INTERVAL '{n}' {unit}{'(3)' if len(n.strip('-')) > 2 and unit != 'SECOND' else ''}"
    return rng.choice(["INTERVAL '1-2' YEAR TO MONTH", "INTERVAL '-1-11' YEAR TO MONTH", "INTERVAL '1 02:03:04' DAY TO SECOND",
                       "INTERVAL '0 00:00:00.001' DAY TO SECOND", "INTERVAL '1 02' DAY TO HOUR", "INTERVAL '10:30' HOUR TO MINUTE",
                       "INTERVAL '-2 12:00:00.5' DAY TO SECOND", "INTERVAL '14' DAY",
                       "INTERVAL '100' DAY(3)", "INTERVAL '1.5' SECOND"])


TEMPORAL_ARG = mix((3, TS), (1, DATE))


def temporal(rng):
    k = rng.randrange(24)
    ts = TS.draw(rng)
    if k in (0, 1):
        src = rng.choice([ts, ts, TSSTR.draw(rng)])
        return fn("DATE_FORMAT", src, rng.choice(DATE_FORMATS + [null("STRING")]))
    if k == 2:
        return fn("TO_DATE", DATESTR.draw(rng), *([rng.choice(PARSE_FORMATS)] if rng.random() < 0.35 else []))
    if k in (3, 4):
        if rng.random() < 0.5:
            return fn("TO_TIMESTAMP", TSSTR.draw(rng))
        fmt = rng.choice(PARSE_FORMATS)
        return fn("TO_TIMESTAMP", rng.choice([TSSTR.draw(rng), DATESTR.draw(rng), formatted(rng, fmt)]), fmt)
    if k == 5:
        if rng.random() < 0.5:
            return fn("UNIX_TIMESTAMP", TSSTR.draw(rng))
        fmt = rng.choice(PARSE_FORMATS)
        return fn("UNIX_TIMESTAMP", rng.choice([TSSTR.draw(rng), formatted(rng, fmt)]), fmt)
    if k == 6:
        return fn("FROM_UNIXTIME", EPOCH.draw(rng), *([rng.choice(DATE_FORMATS)] if rng.random() < 0.4 else []))
    if k in (7, 8, 9):
        unit = rng.choice(UNITS_ADD + ["MONTH", "DAY", "YEAR"])
        n = rng.choice(["1", "-1", "2", "12", "-12", "13", "0", "31", "-31", "59", "366", "1000000", "-25",
                        str(rng.randint(-50, 50)), null("INT"), wrap_int("3")])
        return fn("TIMESTAMPADD", unit, n, TEMPORAL_ARG.draw(rng))
    if k in (10, 11, 12):
        unit = rng.choice(UNITS_ADD)
        pool = rng.choice([TS, TS, DATE])
        a = pool.draw(rng)
        b = pool.draw(rng) if rng.random() < 0.6 else near(rng, a)
        return fn("TIMESTAMPDIFF", unit, a, b)
    if k in (13, 14):
        unit = rng.choice(UNITS_EXTRACT)
        return f"EXTRACT({unit} FROM {rng.choice([TS, TS, DATE, TIME]).draw(rng)})"
    if k in (15, 16):
        unit = rng.choice(UNITS_FLOOR)
        v = rng.choice(BOUNDARY_TS) if rng.random() < 0.35 else TEMPORAL_ARG.draw(rng)
        return f"{rng.choice(['FLOOR', 'CEIL'])}({v} TO {unit})"
    if k in (17, 18):
        f = rng.choice(["YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE",
                        "SECOND"])
        return fn(f, TEMPORAL_ARG.draw(rng))
    if k in (19, 20):
        v = TEMPORAL_ARG.draw(rng)
        return f"{v} {rng.choice(['+', '-'])} {interval(rng)}"
    if k == 21:
        a, b = DATE.draw(rng), DATE.draw(rng)
        return rng.choice([f"TIMESTAMPDIFF(DAY, {a}, {b})", f"{interval(rng)} + {a}"])
    if k == 22:
        return f"TIME '{rand_time(rng, 0)}' {rng.choice(['+', '-'])} INTERVAL '{rng.randint(1, 90)}' {rng.choice(['MINUTE', 'HOUR', 'SECOND'])}"
    return f"CAST({TS.draw(rng)} AS {rng.choice(['DATE', 'TIME', 'TIMESTAMP(0)', 'STRING'])})"


def near(rng, a):
    """A temporal literal close to `a` (same type) across a month or year end, or NULL."""
    if a.startswith("CAST(NULL") or a.startswith("CASE") or "NULL" in a:
        return a
    if a.startswith("DATE"):
        return rng.choice(["DATE '2024-03-01'", "DATE '2023-12-31'", "DATE '2024-01-31'", "DATE '2025-02-28'",
                           "DATE '2023-02-28'", "DATE '2024-02-29'", "DATE '1969-12-31'"])
    return rng.choice(["TIMESTAMP '2024-03-01 00:00:00'", "TIMESTAMP '2023-12-31 23:59:59.999'",
                       "TIMESTAMP '2024-01-31 12:00:00'", "TIMESTAMP '2025-02-28 13:45:30.123'",
                       "TIMESTAMP '2024-02-28 13:45:30.124'", "TIMESTAMP '1969-12-31 23:59:59.999'",
                       "TIMESTAMP '2024-02-29 13:45:29.123'"])


def formatted(rng, fmt):
    """A text in (or close to) the pattern `fmt`."""
    y, m, d = rand_date(rng)
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    text = (fmt.strip("'").replace("''", "'").replace("'T'", "T").replace("yyyy", f"{y:04d}").replace("yy", f"{y % 100:02d}")
            .replace("MMM", rng.choice(["Feb", "Dec", "feb"])).replace("MM", f"{m:02d}").replace("dd", f"{d:02d}")
            .replace("HH", f"{h:02d}").replace("mm", f"{mi:02d}").replace("ss", f"{s:02d}")
            .replace("SSSSSS", "123456").replace("SSS", "123").replace("M", str(m)).replace("d", str(d)))
    if rng.random() < 0.1:
        text = text[:-1]
    return q(text)


ODD_ZONES = ["'PST'", "'EST'", "'Bogus/Zone'", "''", "'UTC+1'", "'utc'", "'Europe/berlin'"]
ZONES = ["'UTC'", "'America/New_York'", "'Europe/Berlin'", "'Asia/Kolkata'", "'Australia/Lord_Howe'", "'Asia/Kathmandu'",
         "'Pacific/Chatham'", "'America/St_Johns'", "'GMT+05:30'", "'GMT-8'", "'+08:00'", "'Asia/Tokyo'", "'America/Los_Angeles'", "'Europe/London'", "'GMT'", "'Z'",
         "'Etc/GMT+12'", "'Pacific/Kiritimati'", "'America/Sao_Paulo'", "'-03:00'"]
DST_TEXT = ["2024-03-10 02:30:00", "2024-03-10 01:59:59", "2024-03-10 03:00:00", "2024-11-03 01:30:00",
            "2024-11-03 00:59:59", "2024-11-03 02:00:00", "2024-03-31 02:30:00", "2024-03-31 01:59:59",
            "2024-10-27 02:30:00", "2024-10-27 01:30:00", "2024-04-07 02:30:00", "2024-10-06 02:15:00",
            "1970-01-01 00:00:00", "2024-02-29 23:30:00", "2023-12-31 23:30:00", "1969-12-31 23:59:59",
            "2024-12-31 20:00:00", "2024-03-10 07:30:00", "2024-11-03 06:30:00"]
DST_EPOCH = ["1710052200", "1710054000", "1730611800", "1730615400", "1711846800", "1729990800", "0", "-1",
             "1709251200", "1735689599"]


def zone(rng):
    r = rng.random()
    if r < 0.02:
        return null("STRING")
    return rng.choice(ODD_ZONES) if r < 0.08 else rng.choice(ZONES)


def timezone(rng):
    k = rng.random()
    if k < 0.45:
        t = q(rng.choice(DST_TEXT)) if rng.random() < 0.6 else TSSTR.draw(rng, wrap=False)
        if rng.random() < 0.05:
            t = null("STRING")
        return fn("CONVERT_TZ", t, zone(rng), zone(rng))
    if k < 0.7:
        prec = rng.choice(["0", "3", "3", "0", None, "6", "9"])
        if prec == "0" or rng.random() < 0.15:
            epoch = rng.choice(DST_EPOCH + [EPOCH.draw(rng)])
        else:
            epoch = EPOCH_MS.draw(rng) if rng.random() < 0.7 else rng.choice(DST_EPOCH) + "000"
        if rng.random() < 0.1:
            epoch = rng.choice(["1.5E0", "-1.5E0", "1700000000.123", "CAST(NULL AS DOUBLE)", NAN, "0.001"])
        inner = fn("TO_TIMESTAMP_LTZ", epoch, *([prec] if prec else []))
    elif k < 0.85:
        text = q(rng.choice(DST_TEXT)) if rng.random() < 0.7 else TSSTR.draw(rng, wrap=False)
        args = [text]
        if rng.random() < 0.8:
            args.append(rng.choice(["'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd'", "'yyyy-MM-dd HH:mm'"]))
            if rng.random() < 0.75:
                args.append(zone(rng))
        inner = fn("TO_TIMESTAMP_LTZ", *args)
    else:
        t = q(rng.choice(DST_TEXT))
        fmt = rng.choice(["'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd HH:mm:ss XXX'"])
        if "XXX" in fmt:
            t = t[:-1] + rng.choice([" +00:00", " -05:00", " +05:30", " Z"]) + "'"
        return fn("UNIX_TIMESTAMP", t, fmt)
    r = rng.random()
    if r < 0.55:
        return inner
    if r < 0.7:
        return fn("DATE_FORMAT", inner, rng.choice(["'yyyy-MM-dd HH:mm:ss'", "'yyyy-MM-dd HH:mm:ss.SSS'", "'HH:mm z'"]))
    if r < 0.85:
        return f"EXTRACT({rng.choice(['HOUR', 'DAY', 'EPOCH', 'YEAR', 'MILLISECOND'])} FROM {inner})"
    return f"CAST({inner} AS {rng.choice(['TIMESTAMP(3)', 'DATE', 'STRING', 'BIGINT', 'TIME'])})"


# ---- JSON

class Raw:
    def __init__(self, text):
        self.text = text


def jscalar(rng):
    return rng.choice([Raw("1"), Raw("0"), Raw("-1"), Raw("-0.0"), Raw("1e2"), Raw("1.50"), Raw("1.5E10"), Raw("2.5"),
                       Raw("12345678901234567890"), Raw("3.141592653589793238"), Raw("-7"), Raw("true"),
                       Raw("false"), Raw("null"), Raw("null"), "", "x", "text", "é", "中文", "😀", "q\"uote",
                       "back\\slash", "tab\tin", "it's", "42", "true", Raw(str(rng.randint(-1000, 1000))),
                       Raw(f"{rng.uniform(-100, 100):.3f}")])


KEYS = ["a", "b", "c", "d", "k", "x", "id", "name", "a b", "", "é", "A", "arr", "obj", "n"]


def jvalue(rng, depth):
    r = rng.random()
    if depth <= 0 or r < 0.4:
        return jscalar(rng)
    if r < 0.72:
        n = rng.randint(0, 4)
        return {rng.choice(KEYS): jvalue(rng, depth - 1) for _ in range(n)}
    return [jvalue(rng, depth - 1) for _ in range(rng.randint(0, 4))]


def jdump(v, sep):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
    if isinstance(v, dict):
        return "{" + sep.join(f"{jdump(k, sep)}:{' ' if sep == ', ' else ''}{jdump(x, sep)}" for k, x in v.items()) + "}"
    return "[" + sep.join(jdump(x, sep) for x in v) + "]"


JSON_EDGE = ['{"a": 1, "b": [1, 2, {"c": "x"}], "d": null, "e": true}', '[1, 2, 3]', '[]', '{}', '"s"', '42', '-0.0',
             '1e2', '1.50', 'true', 'null', '', ' ', 'not json', '{"a": 1', '{a: 1}', "{'a': 1}", '[1, 2,]',
             '{"a": 1, "a": 2}', '{"a": {"b": {"c": {"d": {"e": 5}}}}}', '[[[[1]]]]', '{"a": [], "b": {}}',
             '{"a": null}', '{"a": "1.50", "b": "true", "c": "-0.0"}', '{"n": 12345678901234567890}',
             '{"a": [1, "x", null, true, 1.5]}', '{"": 1, "a b": 2}', '{"a": "中文😀"}', '{"a": 1} trailing',
             '  {"a": 1}  ', '{"a": 1.5e300}', '{"a": 99.995}', '{"arr": [{"k": 1}, {"k": 2}, {"x": 3}]}']


def jdoc(rng):
    """A JSON text (value, parsed tree or None for an edge text)."""
    if rng.random() < 0.3:
        t = rng.choice(JSON_EDGE)
        import json as _json
        try:
            tree = _json.loads(t)
        except Exception:
            tree = None
        return t, tree
    tree = jvalue(rng, rng.randint(1, 5)) if rng.random() < 0.8 else {k: jvalue(rng, 2) for k in rng.sample(KEYS[:8], 4)}
    if rng.random() < 0.6 and not isinstance(tree, dict):
        tree = {"a": tree, "b": jvalue(rng, 2)}
    return jdump(tree, rng.choice([", ", ","])), _plain(tree)


def _plain(v):
    if isinstance(v, Raw):
        return 0
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def key_step(rng, k):
    if k and k.isalnum() and k.isascii() and not k[0].isdigit():
        return "." + k
    return f"['{k}']" if rng.random() < 0.7 else f'."{k}"'


def jpath(rng, tree):
    """A JSON path mostly following `tree`, sometimes stepping off it."""
    steps = []
    node = tree
    depth = rng.randint(0, 4)
    for _ in range(depth):
        r = rng.random()
        if isinstance(node, dict) and node and r < 0.8:
            k = rng.choice(list(node))
            steps.append(key_step(rng, k))
            node = node[k]
        elif isinstance(node, list) and node and r < 0.8:
            i = rng.randrange(len(node))
            if rng.random() < 0.15:
                steps.append("[*]")
                node = node[i]
            else:
                steps.append(f"[{i}]")
                node = node[i]
        else:
            steps.append(rng.choice([".missing", "[0]", "[5]", ".*", "[*]", ".a", ".b", "[1]"]))
            node = None
    path = "$" + "".join(steps)
    mode = rng.choice(["", "", "lax ", "strict "])
    if rng.random() < 0.04:
        path = rng.choice(["$.", "a", "$[", "", "$..a", "$.a[?(@.b > 1)]", "$.a[-1]", "$[1 to 2]", "$.*.b"])
    return q(mode + path)


RETURNING = {"STRING": ["'dflt'", "''", "'-1'"], "INT": ["-1", "0", "'7'"], "BIGINT": ["-1", "CAST(5 AS BIGINT)"],
             "DOUBLE": ["-1.5E0", "0.0E0", "-1"], "BOOLEAN": ["FALSE", "TRUE"], "DECIMAL(10, 2)": ["-1.25", "0", "99.995"],
             "DATE": ["DATE '2024-01-01'"], "VARCHAR(3)": ["'dflt'"]}


def behaviour(rng, kinds, ret):
    c = rng.choice(kinds)
    if c == "DEFAULT":
        d = rng.choice(RETURNING.get(ret or "STRING", ["'dflt'"]))
        if rng.random() < 0.05:
            d = rng.choice(["'dflt'", "1", "CAST(NULL AS INT)"])
        return f"DEFAULT {d}"
    return c


def json(rng):
    k = rng.random()
    text, tree = jdoc(rng)
    doc = q(text) if rng.random() > 0.04 else null("STRING")
    if rng.random() < 0.05:
        doc = wrap_case(doc)
    if k < 0.38:
        ret = rng.choice([None, None, None, "STRING", "STRING", "INT", "INT", "DOUBLE", "DOUBLE", "BOOLEAN", "BOOLEAN",
                          "BIGINT" if rng.random() < 0.3 else "INT", "DECIMAL(10, 2)" if rng.random() < 0.3 else "DOUBLE",
                          "VARCHAR(3)" if rng.random() < 0.2 else "STRING"])
        parts = [f"JSON_VALUE({doc}, {jpath(rng, tree)}"]
        if ret:
            parts.append(f"RETURNING {ret}")
        if rng.random() < 0.55:
            parts.append(behaviour(rng, ["NULL", "ERROR", "DEFAULT", "DEFAULT"], ret) + " ON EMPTY")
        if rng.random() < 0.55:
            parts.append(behaviour(rng, ["NULL", "ERROR", "DEFAULT", "DEFAULT"], ret) + " ON ERROR")
        return " ".join(parts) + ")"
    if k < 0.66:
        parts = [f"JSON_QUERY({doc}, {jpath(rng, tree)}"]
        if rng.random() < 0.06:
            parts.append(rng.choice(["RETURNING STRING", "RETURNING ARRAY<STRING>"]))
        if rng.random() < 0.7:
            parts.append(rng.choice(["WITHOUT WRAPPER", "WITHOUT ARRAY WRAPPER", "WITH WRAPPER", "WITH ARRAY WRAPPER",
                                     "WITH CONDITIONAL WRAPPER", "WITH CONDITIONAL ARRAY WRAPPER",
                                     "WITH UNCONDITIONAL WRAPPER", "WITH UNCONDITIONAL ARRAY WRAPPER"]))
        if rng.random() < 0.55:
            parts.append(rng.choice(["NULL", "EMPTY ARRAY", "EMPTY OBJECT", "ERROR"]) + " ON EMPTY")
        if rng.random() < 0.55:
            parts.append(rng.choice(["NULL", "EMPTY ARRAY", "EMPTY OBJECT", "ERROR"]) + " ON ERROR")
        return " ".join(parts) + ")"
    if k < 0.78:
        tail = ""
        if rng.random() < 0.6:
            tail = " " + rng.choice(["TRUE", "FALSE", "UNKNOWN", "ERROR"]) + " ON ERROR"
        return f"JSON_EXISTS({doc}, {jpath(rng, tree)}{tail})"
    if k < 0.85:
        kind = rng.choice(["", " VALUE", " SCALAR", " ARRAY", " OBJECT"])
        return f"{doc} IS {rng.choice(['', '', 'NOT '])}JSON{kind}"
    if k < 0.93:
        return jctor(rng, 3)
    if k < 0.97:
        v = rng.choice([INT, BIGINT, DOUBLE, DECIMAL, STR, BOOL, DATE, TS, TIME, FLOAT]).draw(rng)
        if rng.random() < 0.2:
            v = rng.choice(["ARRAY[1, 2]", "ARRAY['a', CAST(NULL AS STRING)]", "MAP['k', 1]", "ROW(1, 'x')",
                            "ARRAY[ARRAY[1], ARRAY[2, 3]]", "MAP['k', ARRAY[1.5E0]]", "X'00ff'",
                            "ROW(CAST(NULL AS INT), DATE '2024-02-29')", "ARRAY[CAST('NaN' AS DOUBLE)]"])
        return fn("JSON_STRING", v)
    s = rng.choice(["'\"abc\"'", "'\"a\\\"b\"'", "'\"\\u00e9\"'", "'plain'", "'\"unterminated'", "'[1,2]'",
                    "'\"\"'", "'\"tab\\tnew\\nline\"'", "'\"\\ud83d\\ude00\"'", "'\"\\/\"'", "'\"\\x\"'", "'null'",
                    "'\"  spaced  \"'", "'{\"a\": 1}'", "'\"\\\\\"'"])
    if rng.random() < 0.5:
        return fn("JSON_UNQUOTE", s)
    return fn("JSON_QUOTE", rng.choice([STR.draw(rng), s, "'a\"b\\c'", "'line\\nx'", "'\u00e9\u4e2d'", "'</script>'"]))


def jctor_value(rng, depth):
    r = rng.random()
    if depth > 0 and r < 0.2:
        return jctor(rng, depth - 1)
    if r < 0.25:
        return rng.choice(["JSON('{\"x\": 1}')", "JSON('[1, 2]')", "JSON('\"s\"')", "JSON('null')", "JSON('not')"]) \
            if rng.random() < 0.3 else rng.choice(["ARRAY[1, 2]", "MAP['k', 1]", "ROW(1, 'x')", "ARRAY[CAST(NULL AS INT)]"])
    return rng.choice([INT, DOUBLE, DECIMAL, STR, STR, BOOL, DATE, TS, BIGINT]).draw(rng, wrap=rng.random() < 0.3)


def jctor(rng, depth):
    onnull = rng.choice(["", "", " NULL ON NULL", " ABSENT ON NULL"])
    if rng.random() < 0.55:
        n = rng.randint(0, 4)
        if n == 0:
            onnull = ""
        keys = [rng.choice(["'a'", "'b'", "'c'", "'k'", "''", "'é'", "'a b'", "'q\"k'"]) for _ in range(n)]
        pairs = []
        for key in keys:
            form = rng.random()
            v = jctor_value(rng, depth)
            pairs.append(f"KEY {key} VALUE {v}" if form < 0.3 else f"{key} VALUE {v}")
        return f"JSON_OBJECT({', '.join(pairs)}{onnull})"
    n = rng.randint(0, 4)
    return f"JSON_ARRAY({', '.join(jctor_value(rng, depth) for _ in range(n))}{onnull if n else ''})"


# ---- collections

def int_elem(rng):
    return rng.choice(["1", "2", "3", "0", "-1", "5", "2", "1", "CAST(NULL AS INT)", str(rng.randint(-9, 9))])


def int_array(rng):
    k = rng.random()
    if k < 0.06:
        return null("ARRAY<INT>")
    if k < 0.09:
        return "ARRAY[CAST(NULL AS INT)]"
    n = rng.randint(1, 6)
    a = f"ARRAY[{', '.join(int_elem(rng) for _ in range(n))}]"
    return wrap_case(a) if rng.random() < WRAP_P else a


def str_array(rng):
    if rng.random() < 0.06:
        return null("ARRAY<STRING>")
    n = rng.randint(1, 5)
    el = lambda: rng.choice(["'a'", "'b'", "'c'", "'a'", "''", "'é'", "'中文'", "'😀'", "' '", "CAST(NULL AS STRING)",
                             "'hello'", "'a,b'"])
    return f"ARRAY[{', '.join(el() for _ in range(n))}]"


def dbl_array(rng):
    n = rng.randint(1, 5)
    el = lambda: rng.choice(["1.5E0", "0.0E0", NEGZ, NAN, INF, NINF, "-2.5E0", "CAST(NULL AS DOUBLE)", "1.0E0"])
    return f"ARRAY[{', '.join(el() for _ in range(n))}]"


def dec_array(rng):
    n = rng.randint(1, 4)
    return f"ARRAY[{', '.join(rng.choice(['1.5', '2.25', '-0.5', '10', 'CAST(NULL AS DECIMAL(4, 2))', '0.125']) for _ in range(n))}]"


def any_array(rng):
    r = rng.random()
    if r < 0.5:
        return int_array(rng), "int"
    if r < 0.75:
        return str_array(rng), "str"
    if r < 0.88:
        return dbl_array(rng), "dbl"
    if r < 0.95:
        return dec_array(rng), "dec"
    return rng.choice(["ARRAY[ARRAY[1, 2], ARRAY[3], ARRAY[1, 2]]", "ARRAY[ROW(1, 'a'), ROW(2, 'b')]",
                       "ARRAY[TRUE, FALSE, CAST(NULL AS BOOLEAN)]", "ARRAY[DATE '2024-02-29', DATE '1970-01-01']",
                       "ARRAY[MAP['a', 1]]"]), "other"


def elem_of(rng, kind):
    if kind == "int":
        return int_elem(rng) if rng.random() < 0.9 else rng.choice(["CAST(2 AS BIGINT)", "2.0", "CAST(NULL AS INT)"])
    if kind == "str":
        return rng.choice(["'a'", "'b'", "'z'", "''", "'中文'", "CAST(NULL AS STRING)"])
    if kind == "dbl":
        return rng.choice(["1.5E0", NAN, "0.0E0", NEGZ, INF, "CAST(NULL AS DOUBLE)"])
    if kind == "dec":
        return rng.choice(["1.5", "2.25", "1.50", "CAST(NULL AS DECIMAL(4, 2))"])
    return rng.choice(["ARRAY[1, 2]", "ROW(1, 'a')", "TRUE", "DATE '2024-02-29'", "MAP['a', 1]"])


def same_kind_array(rng, kind, arr):
    make = {"int": int_array, "str": str_array, "dbl": dbl_array, "dec": dec_array}.get(kind)
    return make(rng) if make else arr


def a_map(rng, string_keys=None):
    r = rng.random()
    if string_keys is None:
        string_keys = rng.random() < 0.75
    if r < 0.06:
        return null("MAP<STRING, INT>" if string_keys else "MAP<INT, DOUBLE>")
    if string_keys:
        n = rng.randint(1, 4)
        return "MAP[" + ", ".join(f"{rng.choice(['a', 'b', 'c', 'a', 'é'])!r}, {rng.choice(['1', '2', '-1', 'CAST(NULL AS INT)'])}"
                                  for _ in range(n)) + "]"
    n = rng.randint(1, 3)
    return "MAP[" + ", ".join(f"{rng.randint(0, 3)}, {rng.choice(['1.5E0', NAN, 'CAST(NULL AS DOUBLE)'])}" for _ in range(n)) + "]"


def collection(rng):
    k = rng.randrange(26)
    arr, kind = any_array(rng)
    if k == 0:
        return fn("CARDINALITY", rng.choice([arr, a_map(rng)]))
    if k == 1:
        return fn("ELEMENT", rng.choice([arr, "ARRAY[7]", "ARRAY[CAST(NULL AS INT)]", "ARRAY['x']"]))
    if k in (2, 3):
        return fn("ARRAY_CONTAINS", arr, elem_of(rng, kind))
    if k == 4:
        return fn("ARRAY_DISTINCT", arr)
    if k == 5:
        return fn("ARRAY_POSITION", arr, elem_of(rng, kind))
    if k == 6:
        return fn("ARRAY_REMOVE", arr, elem_of(rng, kind))
    if k == 7:
        return fn("ARRAY_REVERSE", arr)
    if k in (8, 9, 10):
        s = rng.choice(["0", "1", "2", "3", "-1", "-2", "-3", "5", "7", "-7", null("INT")])
        args = [arr, s] + ([rng.choice(["0", "1", "2", "3", "-1", "-2", "4", "6", "-6", null("INT")])]
                           if rng.random() < 0.75 else [])
        return fn("ARRAY_SLICE", *args)
    if k in (11, 12):
        return fn("ARRAY_UNION", arr, same_kind_array(rng, kind, arr))
    if k in (13, 14):
        return fn("ARRAY_CONCAT", arr, *[same_kind_array(rng, kind, arr) for _ in range(rng.randint(0, 2))])
    if k == 15:
        return fn(rng.choice(["ARRAY_MAX", "ARRAY_MIN"]), arr)
    if k == 16:
        a = str_array(rng) if rng.random() < 0.85 else arr
        return fn("ARRAY_JOIN", a, rng.choice(["','", "''", "' - '", null("STRING")]),
                  *([rng.choice(["'NULL'", "''", null("STRING")])] if rng.random() < 0.4 else []))
    if k == 17:
        return fn(rng.choice(["MAP_KEYS", "MAP_VALUES", "MAP_ENTRIES"]), a_map(rng))
    if k in (18, 19):
        idx = rng.choice(["1", "2", "3", "0", "-1", "6", "7", null("INT"), wrap_int("1"), wrap_int("0")])
        return f"{arr}[{idx}]"
    if k == 20:
        m = a_map(rng)
        key = rng.choice(["'a'", "'b'", "'z'", "1", "0", null("STRING")])
        return f"{m}[{key}]"
    if k == 21:
        return fn(rng.choice(["ARRAY_APPEND", "ARRAY_PREPEND"]), arr, elem_of(rng, kind))
    if k == 22:
        return fn("ARRAY_SORT", arr, *rng.choice([[], ["TRUE"], ["FALSE"], ["TRUE", "FALSE"], ["FALSE", "TRUE"]]))
    if k == 23:
        return fn(rng.choice(["ARRAY_EXCEPT", "ARRAY_INTERSECT"]), arr, same_kind_array(rng, kind, arr))
    if k == 24:
        keys = rng.random() < 0.75
        return fn("MAP_UNION", a_map(rng, keys), a_map(rng, keys))
    return fn("MAP_FROM_ARRAYS", str_array(rng), int_array(rng))


COND_POOLS = [INT, DOUBLE, DECIMAL, STR, DATE, TS, BOOL, BIGINT]


def condition(rng):
    r = rng.random()
    if r < 0.3:
        return BOOL.draw(rng)
    return comparison(rng, boolean=True) if r < 0.85 else f"{BOOL.draw(rng)} {rng.choice(['AND', 'OR'])} {BOOL.draw(rng)}"


def conditional(rng):
    k = rng.randrange(12)
    p = rng.choice(COND_POOLS)
    if k in (0, 1):
        return fn("COALESCE", *[p.draw(rng) for _ in range(rng.randint(1, 4))])
    if k == 2:
        return fn("NULLIF", p.draw(rng), p.draw(rng))
    if k == 3:
        return fn("IF", condition(rng), p.draw(rng), p.draw(rng))
    if k == 4:
        return fn("IFNULL", p.draw(rng), p.draw(rng))
    if k in (5, 6):
        whens = " ".join(f"WHEN {condition(rng)} THEN {p.draw(rng)}" for _ in range(rng.randint(1, 3)))
        els = f" ELSE {p.draw(rng)}" if rng.random() < 0.6 else ""
        return f"CASE {whens}{els} END"
    if k == 7:
        subj = INT.draw(rng)
        whens = " ".join(f"WHEN {INT.draw(rng)} THEN {p.draw(rng)}" for _ in range(rng.randint(1, 3)))
        els = f" ELSE {p.draw(rng)}" if rng.random() < 0.6 else ""
        return f"CASE {subj} {whens}{els} END"
    if k in (8, 9):
        a = p.draw(rng) if rng.random() < 0.85 else "NULL"
        b = p.draw(rng) if rng.random() < 0.85 else "NULL"
        return f"{a} IS {rng.choice(['', 'NOT '])}DISTINCT FROM {b}"
    if k == 10:
        v = rng.choice([BOOL.draw(rng), condition(rng)])
        return f"({v}) IS {rng.choice(['', 'NOT '])}{rng.choice(['TRUE', 'FALSE', 'UNKNOWN', 'NULL'])}"
    a, b = BOOL.draw(rng), BOOL.draw(rng)
    return rng.choice([f"{a} AND {b}", f"{a} OR {b}", f"NOT {a}", f"NOT ({a} AND {b})", f"{a} AND NOT {b} OR {a}",
                       f"{p.draw(rng)} IS NULL", f"{p.draw(rng)} IS NOT NULL"])


HASH_STR = mix((4, STR), (1, Pool("STRING", ["'abc'", "''", "'The quick brown fox jumps over the lazy dog'"], None)))
B64 = ["'aGVsbG8='", "'aGVsbG8'", "'not base64!'", "''", "'5Lit5paH'", "'8J+YgA=='", "'YQ=='", "'YQ'", "'===='",
       "'aGVs bG8='", "'YWJj\\n'", "'_-8='", "'+/8='"]
HEXES = ["'616263'", "'6'", "'zz'", "''", "'E4B8AD'", "'e4b8ad'", "'00ff'", "'F09F9880'", "'0x41'", "' 41'", "'4'"]
URLS_ENC = ["'a b'", "'a+b'", "'a%20b'", "'%zz'", "'%'", "'%E4%B8%AD'", "'%e4%b8%ad'", "'%C3'", "'a&b=c'",
            "'~!*()'''", "'path/to/file'", "'%2B%2b'", "'100%'", "'+'"]


def encoding(rng):
    k = rng.randrange(14)
    s = HASH_STR.draw(rng)
    if k in (0, 1):
        return fn(rng.choice(["MD5", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512"]), s)
    if k == 2:
        return fn("SHA2", s, rng.choice(["0", "224", "256", "384", "512", "1", "255", null("INT")]))
    if k in (3, 4):
        return fn("TO_BASE64", s)
    if k == 5:
        return fn("FROM_BASE64", rng.choice(B64 + [s]))
    if k == 6:
        return fn("HEX", rng.choice([s, INT.draw(rng), BIGINT.draw(rng)]))
    if k == 7:
        return fn("UNHEX", rng.choice(HEXES + [s, null("STRING")]))
    if k == 8:
        return fn("URL_ENCODE", s)
    if k == 9:
        return fn("URL_DECODE", rng.choice(URLS_ENC + [s]))
    if k == 10:
        return fn("DECODE", fn("ENCODE", s, rng.choice(CHARSETS[:7])), rng.choice(CHARSETS))
    if k == 11:
        return fn("ENCODE", s, rng.choice(CHARSETS))
    if k == 12:
        return fn(rng.choice(["TO_BASE64", "MD5", "HEX", "CHAR_LENGTH"]),
                  fn(rng.choice(["FROM_BASE64", "URL_DECODE", "URL_ENCODE", "UNHEX"]), rng.choice(B64 + HEXES)))
    return fn("FROM_BASE64", fn("TO_BASE64", s))


FAMILIES = [("numeric", numeric, 3000), ("arithmetic", arithmetic, 2400), ("comparison", comparison, 2100),
            ("cast", cast, 2400), ("string", string, 3200), ("url", parse_url, 900), ("temporal", temporal, 3100),
            ("timezone", timezone, 1000), ("json", json, 3100), ("collection", collection, 1600),
            ("conditional", conditional, 1100), ("encoding", encoding, 900)]


def generate():
    rng = random.Random(SEED)
    seen, families = set(), []
    for name, make, target in FAMILIES:
        calls, attempts = [], 0
        while len(calls) < target and attempts < target * 30:
            attempts += 1
            c = make(rng)
            if c in seen or "\t" in c or "\n" in c:
                continue
            seen.add(c)
            calls.append(c)
        families.append((name, calls))
    return families


# ---------------------------------------------------------------------------------------------
# evaluation on Flink


def flink_error(e):
    text = str(e)
    if "Failed to fetch next result" in text or "JobExecutionException" in text:
        causes = [line for line in text.splitlines() if line.startswith("Caused by: ")]
        if causes:
            text = causes[-1][len("Caused by: "):]
    for marker in ["ValidationException: ", "SqlParserException: ", "TableException: ", "RuntimeException: ",
                   "IllegalArgumentException: ", "CodeGenException: ", "Exception: ", "Error: "]:
        if marker in text:
            text = text[text.index(marker) + len(marker):]
            break
    return text.strip().splitlines()[0] if text.strip() else "error"


def new_env(cluster_options=None):
    from pyflink.table import EnvironmentSettings, TableEnvironment
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", "1")
    config.set("table.local-time-zone", "UTC")
    for key, value in (cluster_options or {}).items():
        config.set(key, value)
    return env


def start_cluster():
    """One local mini cluster for all jobs (a job on the default local target starts its own,
    which costs a second); returns it and the options that send a job to it."""
    from pyflink.java_gateway import get_gateway
    jvm = get_gateway().jvm
    conf = jvm.org.apache.flink.configuration.Configuration()
    conf.setString("rest.port", "0")
    conf.setString("rest.address", "localhost")
    mc_conf = (jvm.org.apache.flink.runtime.minicluster.MiniClusterConfiguration.Builder()
               .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(THREADS * 2).build())
    cluster = jvm.org.apache.flink.runtime.minicluster.MiniCluster(mc_conf)
    cluster.start()
    address = cluster.getRestAddress().get()
    return cluster, {"execution.target": "remote", "rest.address": address.getHost(),
                     "rest.port": str(address.getPort())}


THREADS = 4  # jobs in flight at once: a job's time is mostly waiting, not computing


# Calls likely to fail while running (or while Flink plans the job, after validation): each runs
# alone, as a failing call in a batch costs about one job per halving of the batch.
RISKY = [re.compile(p) for p in [
    r"ERROR ON (EMPTY|ERROR)", r"^JSON_VALUE\(.*RETURNING (INT|BIGINT|DOUBLE|BOOLEAN|DECIMAL)", r"(^|\()CAST\('",
    r"CAST\(CASE WHEN x = 1 THEN '", r"^[LR]PAD\(.*, (-|0,|1,|CAST\(-)", r"^[LR]PAD\(.*''\)$",
    r"'(x|X|XXX|z|Z|q|k:K|G yyyy|HH:mm z)'", r"FROM (CASE WHEN x = 1 THEN )?TIME", r"'bogus'", r"^MAP_FROM_ARRAYS",
    r"\]\[(-|0|CAST\(NULL|\(x \* 0 \+ 0)", r"^SHA2\(", r"^ATAN2\(", r"[/%] \(?-?0(\.0)?\)?( |$)",
    r"^MOD\(.*, \(?-?0(\.0)?\)?\)$", r"^(SIGN|TRUNCATE|ROUND)\((CASE WHEN x = 1 THEN )?CAST\(-?\d+ AS (TINYINT|SMALLINT)",
    r"^(JSON_OBJECT|JSON_ARRAY)\(.*(DATE|TIME)", r"^(TO_BASE64\()?FROM_BASE64\(", r"TO_TIMESTAMP_LTZ.*AS (BIGINT|TIME)\)",
    r"^REGEXP_REPLACE\(.*, '(\(|\[|\*)'", r"^ELEMENT\(", r"^TRUNCATE\(CAST\('(NaN|-?Infinity)'",
    r"'NaN' AS (DOUBLE|FLOAT)\) AS DECIMAL", r"^JSON_QUERY\(.*RETURNING"]]


def risky(call):
    return any(p.search(call) for p in RISKY)


class Evaluator:
    """Flink's result for each call: validated alone (no job), then run with other valid calls
    as the columns of one SELECT; a batch that fails is split in halves until the failing calls
    stand alone. Batches run on THREADS threads, each with its own table environment."""

    def __init__(self, cluster_options, batch):
        self.cluster_options, self.batch = cluster_options, batch
        self.results, self.jobs, self.failed_running = {}, 0, 0
        self.lock = threading.Lock()

    def evaluate(self, calls):
        safe = [c for c in calls if not risky(c)]
        chunks = [safe[i:i + self.batch] for i in range(0, len(safe), self.batch)]
        chunks += [[c] for c in calls if risky(c)]
        self.queue, self.done, self.began, self.total = collections.deque(chunks), 0, time.time(), len(calls)
        workers = [threading.Thread(target=self.work) for _ in range(THREADS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return self.results

    def work(self):
        env = new_env(self.cluster_options)  # used only from this thread: the planner keeps per-thread state
        while True:
            with self.lock:
                if not self.queue:
                    return
                chunk = self.queue.popleft()
            valid = []
            for c in chunk:
                try:
                    env.sql_query(f"SELECT CAST({c} AS STRING) FROM (VALUES (1)) AS t(x)")
                    valid.append(c)
                except Exception as e:
                    self.results[c] = "!ERROR " + flink_error(e)
            if valid:
                self.run(env, valid)
            with self.lock:
                before, self.done = self.done, self.done + len(chunk)
                if self.done // 1000 != before // 1000 or not self.queue:
                    print(f"  {self.done} of {self.total} calls, {self.jobs} jobs, {self.failed_running} failed "
                          f"running, {time.time() - self.began:.0f} s", file=sys.stderr, flush=True)

    def run(self, env, part, known_to_fail=False):
        """Runs `part`; True if it ran. A part known to fail is split without running it whole."""
        if not (known_to_fail and len(part) > 1):
            try:
                with self.lock:
                    self.jobs += 1
                select = ", ".join(f"CAST({c} AS STRING)" for c in part)
                with env.execute_sql(f"SELECT {select} FROM (VALUES (1)) AS t(x)").collect() as rows:
                    row = next(iter(rows))
                for c, v in zip(part, row):
                    self.results[c] = "null" if v is None else v
                return True
            except Exception as e:
                if len(part) == 1:
                    self.results[part[0]] = "!ERROR " + flink_error(e)
                    with self.lock:
                        self.failed_running += 1
                    return False
        first_ran = self.run(env, part[:len(part) // 2])
        self.run(env, part[len(part) // 2:], known_to_fail=first_ran)
        return False


def escape(value):
    value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def main():
    args = sys.argv[1:]
    out_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_calls.txt")
    sample, batch = None, 150
    i = 0
    while i < len(args):
        if args[i] == "--sample":
            sample, i = int(args[i + 1]), i + 2
        elif args[i] == "--batch":
            batch, i = int(args[i + 1]), i + 2
        else:
            out_path, i = args[i], i + 1
    families = generate()
    total = sum(len(c) for _, c in families)
    if sample:
        step = max(1, total // sample)
        families = [(name, calls[::step]) for name, calls in families]
    began = time.time()
    new_env()  # starts the JVM
    cluster, options = start_cluster()
    try:
        ev = Evaluator(options, batch)
        results = ev.evaluate([c for _, calls in families for c in calls])
    finally:
        cluster.close()
    lines, errors, count = [], 0, 0
    for family, calls in families:
        lines.append(f"# {family}")
        fam_errors = 0
        for c in calls:
            value = results[c]
            fam_errors += value.startswith("!ERROR ")
            lines.append(f"{c}\t{escape(value)}")
        errors += fam_errors
        count += len(calls)
        print(f"{family}: {len(calls)} calls, {fam_errors} errors", file=sys.stderr, flush=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"total: {count} calls, {errors} errors ({100.0 * errors / max(count, 1):.1f}%), {ev.jobs} jobs, "
          f"{ev.failed_running} failed running, {time.time() - began:.0f} s -> {out_path}", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    main()
