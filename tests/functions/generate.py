#!/usr/bin/env python3
"""Writes tests/functions/calls.txt: built-in function calls and what Apache Flink 2.3 returns.

Run with the Python of a PyFlink 2.3 installation (the oracle's virtual environment):

    $V/bin/python tests/functions/generate.py

Each call is evaluated as `SELECT CAST(call AS STRING) FROM (VALUES (1)) AS t(x)`, so values
compare as Flink prints them. A file line is `call<TAB>result`: the value, `null`, or
`!ERROR first line of Flink's message` when Flink refuses the call or fails running it.
Calls are grouped per function; the inputs include NULLs, empty strings, extremes and
invalid values.
"""
import itertools, os, sys

S_NULL = "CAST(NULL AS STRING)"
STR = ["'hello'", "''", "'Hello World'", "'  padded  '", "'ünï©ødé'", S_NULL, "'12345'", "'a,b,,c'"]
INT = ["0", "1", "-7", "42", "2147483647", "CAST(NULL AS INT)"]
BIGINT = ["CAST(-9223372036854775808 AS BIGINT)", "CAST(123456789012 AS BIGINT)", "CAST(NULL AS BIGINT)"]
DOUBLE = ["0.0E0", "1.5E0", "-2.25E0", "1.0E308", "0.5E0", "CAST(NULL AS DOUBLE)"]
DEC = ["1.23", "-0.5", "123456.789", "0.00", "CAST(NULL AS DECIMAL(10, 2))"]
TS = ["TIMESTAMP '2024-02-29 13:45:30.123'", "TIMESTAMP '1970-01-01 00:00:00'",
      "TIMESTAMP '1999-12-31 23:59:59.999'", "CAST(NULL AS TIMESTAMP(3))"]
DATES = ["DATE '2024-02-29'", "DATE '1970-01-01'", "DATE '2023-12-31'", "CAST(NULL AS DATE)"]
ARR = ["ARRAY[1, 2, 3, 2]", "ARRAY[CAST(NULL AS INT), 1]", "CAST(NULL AS ARRAY<INT>)", "ARRAY[7]"]
SARR = ["ARRAY['b', 'a', 'c', 'a']", "ARRAY['x', CAST(NULL AS STRING)]", "CAST(NULL AS ARRAY<STRING>)"]
MAPS = ["MAP['a', 1, 'b', 2]", "MAP['z', CAST(NULL AS INT)]", "CAST(NULL AS MAP<STRING, INT>)"]
JSON = ["'{\"a\": 1, \"b\": [1, 2, {\"c\": \"x\"}], \"d\": null, \"e\": true}'", "'[1, 2, 3]'",
        "'not json'", "''", S_NULL, "'{\"a\": \"text\", \"n\": 1.5}'", "'\"s\"'", "'42'"]
PATHS = ["'$.a'", "'$.b[2].c'", "'$.b'", "'$.missing'", "'$'", "'$.n'", "'lax $.d'", "'strict $.missing'"]


def calls(name, *pools, limit=None):
    """`name(args)` over every combination of the pools (the first `limit` of them)."""
    out = [f"{name}({', '.join(args)})" for args in itertools.product(*pools)]
    return out[:limit] if limit else out


def around(name, base, pools):
    """`name(base)`, then each argument replaced by each value of its pool in turn."""
    out = [f"{name}({', '.join(base)})"]
    for i, pool in enumerate(pools):
        for value in pool:
            args = list(base)
            args[i] = value
            call = f"{name}({', '.join(args)})"
            if call not in out:
                out.append(call)
    return out


def string_calls():
    c = []
    for f in ["UPPER", "LOWER", "INITCAP", "CHAR_LENGTH", "CHARACTER_LENGTH", "REVERSE", "LTRIM", "RTRIM", "BTRIM",
              "ASCII", "MD5", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512", "TO_BASE64", "FROM_BASE64",
              "IS_ALPHA", "IS_DECIMAL", "IS_DIGIT", "URL_ENCODE", "URL_DECODE", "HEX"]:
        c += calls(f, STR)
    c += ["FROM_BASE64('aGVsbG8=')", "FROM_BASE64('not base64!')", "URL_DECODE('a%20b%2Bc')", "URL_DECODE('%zz')",
          "ASCII('A')", "TO_BASE64(X'00ff10')", "HEX(255)", "HEX(-1)", "HEX(CAST(NULL AS BIGINT))"]
    c += around("SHA2", ["'abc'", "256"], [STR[:3] + [S_NULL], ["224", "384", "512", "0", "1", "CAST(NULL AS INT)"]])
    c += around("SUBSTRING", ["'Hello World'", "2", "5"], [STR, ["0", "-3", "20", "CAST(NULL AS INT)"],
                                                           ["0", "-1", "100", "CAST(NULL AS INT)"]])
    c += calls("SUBSTR", ["'Hello World'", "''"], ["3", "-2"])
    c += around("LEFT", ["'Hello'", "3"], [STR, ["0", "-1", "10", "CAST(NULL AS INT)"]])
    c += around("RIGHT", ["'Hello'", "3"], [STR, ["0", "-1", "10", "CAST(NULL AS INT)"]])
    c += around("REPEAT", ["'ab'", "3"], [STR[:3] + [S_NULL], ["0", "-1", "CAST(NULL AS INT)"]])
    c += around("LPAD", ["'hi'", "5", "'xy'"], [STR[:3] + [S_NULL], ["0", "1", "-1", "CAST(NULL AS INT)"],
                                              ["''", S_NULL]])
    c += around("RPAD", ["'hi'", "5", "'xy'"], [STR[:3] + [S_NULL], ["0", "1", "-1"], ["''", S_NULL]])
    c += around("REPLACE", ["'banana'", "'an'", "'AN'"], [STR[:3] + [S_NULL], ["''", "'x'", S_NULL], ["''", S_NULL]])
    c += around("TRANSLATE", ["'hello'", "'el'", "'ip'"], [STR[:3] + [S_NULL], ["''", S_NULL], ["'i'", "''", S_NULL]])
    c += around("LOCATE", ["'l'", "'hello'"], [["''", "'lo'", "'z'", S_NULL], STR[:4]])
    c += around("LOCATE", ["'l'", "'hello'", "4"], [[], [], ["0", "-1", "10", "CAST(NULL AS INT)"]])
    c += around("INSTR", ["'hello'", "'l'"], [STR[:4], ["''", "'lo'", "'z'", S_NULL]])
    c += around("POSITION", ["'l' IN 'hello'"], [])
    c += ["POSITION('' IN 'hello')", "POSITION('z' IN 'hello')", f"POSITION({S_NULL} IN 'a')"]
    c += around("CONCAT", ["'a'", "'b'"], [STR[:3] + [S_NULL], ["''", S_NULL]])
    c += ["CONCAT('a')", "CONCAT('a', 'b', 'c', 'd')"]
    c += around("CONCAT_WS", ["'-'", "'a'", "'b'"], [["''", S_NULL], [S_NULL], ["''", S_NULL]])
    c += around("SPLIT_INDEX", ["'a,b,,c'", "','", "1"], [[S_NULL, "''"], ["''", "'b'", S_NULL],
                                                         ["0", "3", "4", "-1", "CAST(NULL AS INT)"]])
    c += around("ELT", ["2", "'a'", "'b'", "'c'"], [["1", "3", "0", "4", "-1", "CAST(NULL AS INT)"], [], [], []])
    c += around("OVERLAY", ["'Hello World' PLACING 'XY' FROM 2"], [])
    c += ["OVERLAY('Hello World' PLACING 'XY' FROM 2 FOR 4)", "OVERLAY('Hello' PLACING '' FROM 1 FOR 2)",
          "OVERLAY('Hello' PLACING 'abc' FROM 10)", f"OVERLAY({S_NULL} PLACING 'a' FROM 1)"]
    c += ["TRIM('  x  ')", "TRIM(BOTH 'x' FROM 'xxaxx')", "TRIM(LEADING 'x' FROM 'xxaxx')",
          "TRIM(TRAILING 'x' FROM 'xxaxx')", f"TRIM({S_NULL})", "TRIM(BOTH '' FROM 'abc')", "LTRIM('xxaxx', 'x')",
          "RTRIM('xxaxx', 'x')", "BTRIM('xyaxy', 'xy')"]
    c += around("STARTSWITH", ["'hello'", "'he'"], [STR[:4], ["''", "'lo'", S_NULL]])
    c += around("ENDSWITH", ["'hello'", "'lo'"], [STR[:4], ["''", "'he'", S_NULL]])
    c += around("REGEXP", ["'abc123'", "'[0-9]+'"], [STR[:4], ["'^a'", "'('", "''", S_NULL]])
    c += around("REGEXP_EXTRACT", ["'foo123bar'", "'([a-z]+)([0-9]+)'", "2"], [
        ["'nothing'", S_NULL], ["'('", S_NULL], ["0", "1", "3", "-1", "CAST(NULL AS INT)"]])
    c += ["REGEXP_EXTRACT('foo123bar', '[0-9]+')"]
    c += around("REGEXP_EXTRACT_ALL", ["'a1b22c333'", "'([a-z])([0-9]+)'", "2"], [
        ["''", S_NULL], ["'('", S_NULL], ["0", "1", "3", "-1"]])
    c += around("REGEXP_REPLACE", ["'a1b22c333'", "'[0-9]+'", "'#'"], [["''", S_NULL], ["''", "'('", S_NULL],
                                                                      ["''", S_NULL]])
    c += around("REGEXP_COUNT", ["'a1b22c333'", "'[0-9]+'"], [["''", S_NULL], ["''", "'('", S_NULL]])
    c += around("REGEXP_INSTR", ["'a1b22c333'", "'[0-9]{2}'"], [["''", S_NULL], ["'z'", "'('", S_NULL]])
    c += around("REGEXP_SUBSTR", ["'a1b22c333'", "'[0-9]{2}'"], [["''", S_NULL], ["'z'", "'('", S_NULL]])
    c += around("SPLIT", ["'a,b,,c'", "','"], [["''", S_NULL], ["''", "'b,'", S_NULL]])
    c += around("STR_TO_MAP", ["'a=1,b=2,c'"], [["''", S_NULL, "'k:v;x:y'"]])
    c += ["STR_TO_MAP('k:v;x:y', ';', ':')", "STR_TO_MAP('a=1,a=2')"]
    c += around("PARSE_URL", ["'http://user@example.com:8080/p/a?x=1&y=2#frag'", "'HOST'"], [
        ["'not a url'", S_NULL], ["'PATH'", "'QUERY'", "'REF'", "'PROTOCOL'", "'AUTHORITY'", "'FILE'", "'USERINFO'",
                                  "'bogus'", S_NULL]])
    c += ["PARSE_URL('http://example.com/p?x=1&y=2', 'QUERY', 'y')",
          "PARSE_URL('http://example.com/p?x=1&y=2', 'QUERY', 'z')"]
    c += around("ENCODE", ["'hello'", "'UTF-8'"], [["''", S_NULL], ["'US-ASCII'", "'ISO-8859-1'", "'UTF-16BE'",
                                                                   "'bogus'"]])
    c += ["DECODE(ENCODE('hé', 'UTF-8'), 'UTF-8')", "DECODE(X'68c3a9', 'ISO-8859-1')"]
    c += around("CHR", ["65"], [["0", "97", "255", "256", "-1", "CAST(NULL AS INT)"]])
    c += ["'a' || 'b'", f"'a' || {S_NULL}", "UPPER('ß')", "LOWER('ÀÉ')", "INITCAP('hello wORLD foo-bar')"]
    c += around("PRINTF", ["'%s-%d'", "'a'", "5"], [["'%05.2f'", "'%x'", "'%%'"], [], []])
    return c


def numeric_calls():
    c = []
    nums = INT + DOUBLE + DEC[:3]
    for f in ["ABS", "SIGN", "CEIL", "FLOOR", "EXP", "LN", "LOG10", "LOG2", "SQRT", "SIN", "COS", "TAN", "COT", "ASIN",
              "ACOS", "ATAN", "SINH", "COSH", "TANH", "DEGREES", "RADIANS"]:
        c += calls(f, nums)
    c += around("LOG", ["2", "8"], [["10", "0", "-1", "1", "CAST(NULL AS INT)"], ["0", "1", "-2", "1.5E0"]])
    c += ["LOG(100)", "LOG(2.718281828459045E0)"]
    c += around("POWER", ["2", "10"], [["0", "-2", "1.5E0", "CAST(NULL AS INT)"], ["0", "-1", "0.5E0", "1000"]])
    c += around("ATAN2", ["1", "2"], [["0", "-1", "CAST(NULL AS DOUBLE)"], ["0", "-1"]])
    c += around("MOD", ["17", "5"], [["-17", "0", "CAST(NULL AS INT)"], ["-5", "0", "CAST(NULL AS INT)"]])
    c += ["MOD(CAST(17 AS BIGINT), 5)", "MOD(17.5, 5)", "MOD(-17, -5)"]
    c += around("ROUND", ["123.456", "1"], [DEC + DOUBLE + INT, ["0", "-1", "2", "5"]])
    c += ["ROUND(123.456)", "ROUND(2.5)", "ROUND(-2.5)", "ROUND(2.5E0)", "ROUND(CAST(12345 AS BIGINT), -2)"]
    c += around("TRUNCATE", ["123.456", "1"], [DEC + DOUBLE + INT, ["0", "-1", "2", "5"]])
    c += ["TRUNCATE(123.456)", "TRUNCATE(-2.7E0)"]
    c += calls("BIN", INT + BIGINT)
    c += around("CONV", ["'100'", "2", "10"], [["'ff'", "'-10'", "''", "'zz'", S_NULL], ["16", "36", "1", "37"],
                                               ["16", "-10", "2"]])
    c += ["CONV(255, 10, 16)", "CONV(-1, 10, 16)"]
    c += ["PI()", "E()", "PI", "UNHEX('616263')", "UNHEX('6')", "UNHEX('zz')", f"UNHEX({S_NULL})"]
    c += ["1 + 2", "7 / 2", "7.0 / 2", "7 % 3", "-7 % 3", "2147483647 + 1", "CAST(1 AS TINYINT) + CAST(1 AS TINYINT)",
          "1.5E0 * 2", "1 / 0.5", "10 / 3.0", "1.0E0 / 0", "0.1 + 0.2", "CAST(0.1 AS DOUBLE) + CAST(0.2 AS DOUBLE)"]
    return c


def conditional_calls():
    c = []
    c += around("GREATEST", ["1", "5", "3"], [["CAST(NULL AS INT)", "10"], [], ["7"]])
    c += ["GREATEST('a', 'b', 'ab')", "GREATEST(1.5, 2)", "GREATEST(DATE '2024-01-01', DATE '2023-01-01')"]
    c += around("LEAST", ["1", "5", "3"], [["CAST(NULL AS INT)", "-10"], [], ["-7"]])
    c += ["LEAST('a', 'b', 'ab')", "LEAST(1.5, 2)"]
    c += ["COALESCE(CAST(NULL AS INT), 2, 3)", "COALESCE(CAST(NULL AS INT), CAST(NULL AS INT))", "COALESCE('a')",
          "IFNULL(CAST(NULL AS INT), 5)", "IFNULL(1, 5)", "NULLIF(1, 1)", "NULLIF(1, 2)", "NULLIF('a', 'b')",
          "IF(1 < 2, 'yes', 'no')", "IF(CAST(NULL AS BOOLEAN), 1, 2)", "CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END",
          "CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END", "CASE 3 WHEN 1 THEN 'one' END",
          "1 IS DISTINCT FROM CAST(NULL AS INT)", "CAST(NULL AS INT) IS NOT DISTINCT FROM CAST(NULL AS INT)",
          "1 BETWEEN 0 AND 2", "5 NOT BETWEEN 0 AND 2", "2 BETWEEN SYMMETRIC 3 AND 1", "3 IN (1, 2, 3)",
          "CAST(NULL AS INT) IN (1, 2)", "4 NOT IN (1, CAST(NULL AS INT))", "'abc' LIKE 'a%'", "'abc' LIKE 'a_'",
          "'a_c' LIKE 'a!_c' ESCAPE '!'", "'abc' SIMILAR TO 'a(b|c)c'", "'ABC' NOT LIKE 'a%'",
          "TRUE AND CAST(NULL AS BOOLEAN)", "FALSE AND CAST(NULL AS BOOLEAN)", "TRUE OR CAST(NULL AS BOOLEAN)",
          "CAST(NULL AS BOOLEAN) IS UNKNOWN", "NOT CAST(NULL AS BOOLEAN)"]
    return c


def temporal_calls():
    c = []
    for f in ["YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE", "SECOND"]:
        c += calls(f, TS + DATES[:2])
    for unit in ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "DOY", "DOW",
                 "EPOCH", "CENTURY", "DECADE", "MILLENNIUM", "ISODOW", "ISOYEAR"]:
        c += [f"EXTRACT({unit} FROM {TS[0]})", f"EXTRACT({unit} FROM {DATES[0]})"]
    c += [f"EXTRACT(YEAR FROM {TS[3]})"]
    for fmt in ["'yyyy-MM-dd'", "'yyyy-MM-dd HH:mm:ss.SSS'", "'EEE, d MMM yyyy'", "'EEEE MMMM'", "'hh a'",
                "'D w u'", "'yy-M-d H:m:s'", "''''", "'''T'''", "'Q'", "'G'", "'z'", "'k K'", "'S'", "'SSSSSS'",
                "'W F E'", "'Y'", "'n'", S_NULL]:
        c += [f"DATE_FORMAT({TS[0]}, {fmt})"]
    c += ["DATE_FORMAT('2024-02-29 13:45:30', 'yyyy/MM/dd')", "DATE_FORMAT('nonsense', 'yyyy')",
          f"DATE_FORMAT({TS[3]}, 'yyyy')"]
    for unit in ["YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND"]:
        c += [f"TIMESTAMPADD({unit}, 3, {TS[0]})", f"TIMESTAMPADD({unit}, -1, {DATES[0]})",
              f"TIMESTAMPDIFF({unit}, {TS[1]}, {TS[0]})", f"TIMESTAMPDIFF({unit}, {DATES[0]}, {DATES[1]})"]
    c += [f"TIMESTAMPADD(DAY, CAST(NULL AS INT), {TS[0]})", f"TIMESTAMPDIFF(DAY, {TS[3]}, {TS[0]})"]
    c += around("TO_TIMESTAMP", ["'2024-02-29 13:45:30'"], [["'2024-02-29 13:45:30.123456'", "'2024-02-30 00:00:00'",
                                                            "'garbage'", "''", S_NULL]])
    c += ["TO_TIMESTAMP('29/02/2024', 'dd/MM/yyyy')", "TO_TIMESTAMP('2024', 'yyyy')"]
    c += around("TO_DATE", ["'2024-02-29'"], [["'2024-13-01'", "''", S_NULL]])
    c += ["TO_DATE('29/02/2024', 'dd/MM/yyyy')"]
    c += around("TO_TIMESTAMP_LTZ", ["1700000000", "0"], [["-1", "CAST(NULL AS BIGINT)", "1700000000123"],
                                                         ["3", "6", "9", "2"]])
    c += ["TO_TIMESTAMP_LTZ(1700000000123)", "TO_TIMESTAMP_LTZ('2024-02-29 13:45:30', 'yyyy-MM-dd HH:mm:ss')"]
    c += around("FROM_UNIXTIME", ["1700000000"], [["0", "-1", "CAST(NULL AS BIGINT)"]])
    c += ["FROM_UNIXTIME(1700000000, 'yyyy/MM/dd HH')"]
    c += ["UNIX_TIMESTAMP('2024-02-29 13:45:30')", "UNIX_TIMESTAMP('2024/02/29', 'yyyy/MM/dd')",
          "UNIX_TIMESTAMP('garbage')", f"UNIX_TIMESTAMP({S_NULL})"]
    c += around("CONVERT_TZ", ["'2024-02-29 13:45:30'", "'UTC'", "'Asia/Tokyo'"], [
        ["'2024-07-01 00:00:00'", "'garbage'", S_NULL], ["'America/New_York'", "'GMT+05:30'", "'Bogus/Zone'"],
        ["'Europe/Berlin'", S_NULL]])
    c += [f"{TS[0]} + INTERVAL '1' DAY", f"{TS[0]} - INTERVAL '2' HOUR", f"{DATES[0]} + INTERVAL '1' YEAR",
          f"{DATES[0]} - INTERVAL '1' MONTH", f"{TS[0]} + INTERVAL '1-2' YEAR TO MONTH",
          f"{TS[0]} + INTERVAL '1 02:03:04' DAY TO SECOND", f"CAST({TS[0]} AS DATE)", f"CAST({DATES[0]} AS TIMESTAMP)",
          f"FLOOR({TS[0]} TO HOUR)", f"CEIL({TS[0]} TO DAY)", f"FLOOR({DATES[0]} TO MONTH)", f"CEIL({TS[0]} TO YEAR)",
          f"({TS[1]}, {TS[0]}) OVERLAPS ({TS[2]}, {TS[0]})", "DATE '2024-03-01' - DATE '2024-02-01'",
          "TIME '13:45:30'", "HOUR(TIME '13:45:30')", "TIME '13:45:30' + INTERVAL '1' MINUTE",
          "CAST('2024-02-29' AS DATE)", "CAST('13:45' AS TIME)", "LAST_DAY(DATE '2024-02-10')"]
    return c


def json_calls():
    c = []
    c += calls("JSON_VALUE", JSON[:6], PATHS, limit=None)
    for clause in ["RETURNING INT", "RETURNING DOUBLE", "RETURNING BOOLEAN", "NULL ON EMPTY", "DEFAULT 'none' ON EMPTY",
                   "ERROR ON EMPTY", "DEFAULT 'bad' ON ERROR", "ERROR ON ERROR", "RETURNING INT DEFAULT -1 ON ERROR"]:
        for path in ["'$.a'", "'$.missing'", "'$.b'", "'$.n'"]:
            c.append(f"JSON_VALUE({JSON[0]}, {path} {clause})")
            c.append(f"JSON_VALUE({JSON[5]}, {path} {clause})")
    c += calls("JSON_QUERY", JSON[:6], ["'$.b'", "'$.a'", "'$'", "'$.missing'", "'$.b[2]'"])
    for wrapper in ["WITH WRAPPER", "WITH CONDITIONAL ARRAY WRAPPER", "WITHOUT ARRAY WRAPPER",
                    "WITH UNCONDITIONAL ARRAY WRAPPER", "EMPTY ARRAY ON EMPTY", "EMPTY OBJECT ON EMPTY",
                    "NULL ON ERROR", "EMPTY ARRAY ON ERROR", "ERROR ON ERROR"]:
        for path in ["'$.b'", "'$.a'", "'$.missing'"]:
            c.append(f"JSON_QUERY({JSON[0]}, {path} {wrapper})")
    c += ["JSON_QUERY('{\"a\": [1, 2]}', '$.a' RETURNING ARRAY<STRING>)"]
    c += calls("JSON_EXISTS", JSON[:6], ["'$.a'", "'$.b[1]'", "'$.missing'", "'strict $.missing'", "'$'"])
    c += [f"JSON_EXISTS({JSON[0]}, 'strict $.missing' {clause} ON ERROR)" for clause in ["TRUE", "FALSE", "UNKNOWN"]]
    c += ["JSON_EXISTS('not json', '$.a' ERROR ON ERROR)"]
    for j in JSON + ["'{\"a\": 1'"]:
        for kind in ["", " VALUE", " SCALAR", " ARRAY", " OBJECT"]:
            c.append(f"{j} IS JSON{kind}")
        c.append(f"{j} IS NOT JSON")
    c += ["JSON_OBJECT()", "JSON_OBJECT('a' VALUE 1)", "JSON_OBJECT(KEY 'a' VALUE 'x', KEY 'b' VALUE TRUE)",
          f"JSON_OBJECT('a' VALUE {S_NULL})", f"JSON_OBJECT('a' VALUE {S_NULL} ABSENT ON NULL)",
          f"JSON_OBJECT('a' VALUE {S_NULL} NULL ON NULL)", "JSON_OBJECT('a' VALUE ARRAY[1, 2])",
          "JSON_OBJECT('a' VALUE JSON_OBJECT('b' VALUE 1))", "JSON_OBJECT('a' VALUE 1.5E0, 'b' VALUE 2.25)",
          "JSON_OBJECT('a' VALUE MAP['k', 1])", "JSON_OBJECT('a' VALUE ROW(1, 'x'))",
          "JSON_OBJECT('a' VALUE 'q\"uote\\\\')", f"JSON_OBJECT('t' VALUE {TS[0]})",
          "JSON_OBJECT('a' VALUE JSON('{\"x\": 1}'))"]
    c += ["JSON_ARRAY()", "JSON_ARRAY(1, 'a', TRUE)", f"JSON_ARRAY(1, {S_NULL})", f"JSON_ARRAY(1, {S_NULL} NULL ON NULL)",
          "JSON_ARRAY(JSON_ARRAY(1), JSON_OBJECT('k' VALUE 2))", "JSON_ARRAY(ARRAY[1, 2], 1.5)",
          f"JSON_ARRAY({DATES[0]})"]
    c += calls("JSON_STRING", ["1", "'a'", "TRUE", "1.5E0", "ARRAY[1, 2]", "MAP['k', 'v']", "ROW(1, 'x')",
                               S_NULL, TS[0], DATES[0], "'q\"uote'"])
    c += ["JSON_QUOTE('a\"b')", "JSON_UNQUOTE('\"a\\\\\"b\"')", "JSON_UNQUOTE('plain')"]
    return c


def collection_calls():
    c = []
    c += around("ARRAY_CONTAINS", ["ARRAY[1, 2, 3, 2]", "2"], [ARR[1:], ["5", "CAST(NULL AS INT)"]])
    c += calls("ARRAY_DISTINCT", ARR + SARR)
    c += calls("ARRAY_REVERSE", ARR + SARR)
    c += calls("ARRAY_MAX", ARR + SARR)
    c += calls("ARRAY_MIN", ARR + SARR)
    c += calls("ARRAY_SORT", ARR + SARR)
    c += ["ARRAY_SORT(ARRAY[3, 1, CAST(NULL AS INT)], FALSE)", "ARRAY_SORT(ARRAY[3, 1, CAST(NULL AS INT)], TRUE, FALSE)"]
    c += calls("CARDINALITY", ARR + SARR + MAPS)
    c += around("ARRAY_POSITION", ["ARRAY[1, 2, 3, 2]", "2"], [ARR[1:], ["5", "CAST(NULL AS INT)"]])
    c += around("ARRAY_REMOVE", ["ARRAY[1, 2, 3, 2]", "2"], [ARR[1:], ["5", "CAST(NULL AS INT)"]])
    c += around("ARRAY_APPEND", ["ARRAY[1, 2]", "3"], [ARR[1:], ["CAST(NULL AS INT)"]])
    c += around("ARRAY_PREPEND", ["ARRAY[1, 2]", "3"], [ARR[1:], ["CAST(NULL AS INT)"]])
    c += around("ARRAY_SLICE", ["ARRAY[1, 2, 3, 4, 5]", "2", "4"], [ARR[1:], ["0", "-2", "6", "CAST(NULL AS INT)"],
                                                                    ["0", "-1", "10", "CAST(NULL AS INT)"]])
    c += ["ARRAY_SLICE(ARRAY[1, 2, 3, 4, 5], 3)"]
    c += around("ARRAY_UNION", ["ARRAY[1, 2, 2]", "ARRAY[3, 1]"], [ARR[1:], ARR[1:]])
    c += around("ARRAY_CONCAT", ["ARRAY[1, 2, 2]", "ARRAY[3, 1]"], [ARR[1:], ARR[1:]])
    c += around("ARRAY_EXCEPT", ["ARRAY[1, 2, 2, 3]", "ARRAY[2]"], [ARR[1:], ARR[1:]])
    c += around("ARRAY_INTERSECT", ["ARRAY[1, 2, 2, 3]", "ARRAY[2, 3, 4]"], [ARR[1:], ARR[1:]])
    c += around("ARRAY_JOIN", ["ARRAY['a', 'b', 'c']", "'-'"], [SARR, ["''", S_NULL]])
    c += ["ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING)], ',', 'N')"]
    c += ["ELEMENT(ARRAY[7])", "ELEMENT(ARRAY[CAST(NULL AS INT)])", "ELEMENT(ARRAY[1, 2])",
          "ARRAY[1, 2, 3][2]", "ARRAY[1, 2, 3][4]", "ARRAY[1, 2, 3][0]", "MAP['a', 1]['a']", "MAP['a', 1]['b']",
          "ARRAY[1, 2] = ARRAY[1, 2]", "ROW(1, 'x') = ROW(1, 'x')"]
    c += calls("MAP_KEYS", MAPS)
    c += calls("MAP_VALUES", MAPS)
    c += calls("MAP_ENTRIES", MAPS)
    c += around("MAP_FROM_ARRAYS", ["ARRAY['a', 'b']", "ARRAY[1, 2]"], [["ARRAY['a', 'a']", "CAST(NULL AS ARRAY<STRING>)"],
                                                                       ["ARRAY[1]", "CAST(NULL AS ARRAY<INT>)"]])
    c += around("MAP_UNION", ["MAP['a', 1, 'b', 2]", "MAP['b', 3, 'c', 4]"], [MAPS[1:], MAPS[1:]])
    c += ["MAP['a', 1, 'a', 2]", "MAP[1, 'x', 2, CAST(NULL AS STRING)]", "CARDINALITY(MAP['a', 1, 'a', 2])"]
    return c


def cast_calls():
    c = []
    targets = ["INT", "BIGINT", "TINYINT", "DOUBLE", "FLOAT", "DECIMAL(5, 2)", "BOOLEAN", "DATE", "TIMESTAMP(3)",
               "STRING", "VARCHAR(3)", "CHAR(5)", "BYTES"]
    sources = ["'42'", "' 42 '", "'4.7'", "'abc'", "''", "'true'", "'2024-02-29'", "'2024-02-29 13:45:30.5'",
               "123.456", "-1.5E0", "300", "TRUE", S_NULL]
    for kind in ["CAST", "TRY_CAST"]:
        for src in sources:
            for t in targets:
                c.append(f"{kind}({src} AS {t})")
    c += ["CAST(1.0E20 AS INT)", "CAST(12345.678 AS DECIMAL(5, 2))", "TRY_CAST(12345.678 AS DECIMAL(5, 2))",
          "CAST(X'68656c6c6f' AS STRING)", "CAST(ARRAY[1, 2] AS ARRAY<STRING>)", "CAST(ROW(1, 'a') AS ROW<x STRING, y STRING>)"]
    return c


def misc_calls():
    return ["TYPEOF(1)", "TYPEOF('abc')", "TYPEOF(CAST(NULL AS DOUBLE))", "TYPEOF(ARRAY[1])", "TYPEOF(1.5, TRUE)",
            "HASH_CODE('abc')", "HASH_CODE(CAST(NULL AS STRING))", "HASH_CODE(42)", "ROW(1, 'a')",
            "CURRENT_DATABASE()", "CURRENT_CATALOG", "IS_ALPHA('abc')", "BITAND(12, 10)", "BITOR(12, 10)",
            "BITXOR(12, 10)", "BITNOT(12)", "12 & 10", "CAST(NULL AS INT) IS NULL", "SOURCE_WATERMARK()"]


FAMILIES = [("string", string_calls), ("numeric", numeric_calls), ("conditional", conditional_calls),
            ("temporal", temporal_calls), ("json", json_calls), ("collection", collection_calls),
            ("cast", cast_calls), ("misc", misc_calls)]


def flink_error(e):
    text = str(e)
    for marker in ["ValidationException: ", "SqlParserException: ", "TableException: ", "RuntimeException: ",
                   "IllegalArgumentException: ", "CodeGenException: ", "Exception: "]:
        if marker in text:
            text = text[text.index(marker) + len(marker):]
            break
    return text.strip().splitlines()[0] if text.strip() else "error"


def evaluate(env, calls_of):
    """Flink's result for each call: validated one by one (no job), run in batches of valid
    calls, a batch that fails split in halves until the failing calls stand alone."""
    results, valid = {}, []
    for c in calls_of:
        try:
            env.sql_query(f"SELECT CAST({c} AS STRING) FROM (VALUES (1)) AS t(x)")
            valid.append(c)
        except Exception as e:
            results[c] = "!ERROR " + flink_error(e)

    def run(part):
        try:
            select = ", ".join(f"CAST({c} AS STRING)" for c in part)
            with env.execute_sql(f"SELECT {select} FROM (VALUES (1)) AS t(x)").collect() as rows:
                row = next(iter(rows))
            for c, v in zip(part, row):
                results[c] = "null" if v is None else v
        except Exception as e:
            if len(part) == 1:
                results[part[0]] = "!ERROR " + flink_error(e)
            else:
                run(part[:len(part) // 2])
                run(part[len(part) // 2:])

    for start in range(0, len(valid), 100):
        run(valid[start:start + 100])
    return results


def main():
    from pyflink.table import EnvironmentSettings, TableEnvironment
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    env.get_config().set("table.local-time-zone", "UTC")
    out_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt")
    lines = []
    for family, make in FAMILIES:
        seen = set()
        calls_of = [c for c in make() if not (c in seen or seen.add(c))]
        results = evaluate(env, calls_of)
        lines.append(f"# {family}")
        for c in calls_of:
            value = results[c].replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            lines.append(f"{c}\t{value}")
        print(f"{family}: {len(calls_of)} calls", file=sys.stderr, flush=True)
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
