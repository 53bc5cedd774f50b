-- EXPLAIN of Python scalar (general, pandas) and table functions, as Flink 2.3 printed it
-- (explain.flink.out): a PythonCalc of the calls over a Calc of the columns and the condition,
-- a PythonCorrelate reading its arguments by position.
SET 'python.files' = 'explain_udfs.py';

CREATE TEMPORARY FUNCTION add_one AS 'explain_udfs.add_one' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION add_one_pandas AS 'explain_udfs.add_one_pandas' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION split_words AS 'explain_udfs.split_words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION words AS 'explain_udfs.words' LANGUAGE PYTHON;

CREATE TABLE orders (id INT, name STRING, price DECIMAL(10, 2), amount DOUBLE, qty INT, d DATE, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv', 'csv.null-literal' = '');

EXPLAIN SELECT id, add_one(qty) FROM orders WHERE qty > 1;
EXPLAIN SELECT id, add_one_pandas(qty) FROM orders WHERE qty > 1;
EXPLAIN SELECT id, w FROM orders, LATERAL TABLE(split_words(name)) AS t(w);
EXPLAIN SELECT id, w FROM orders LEFT JOIN LATERAL TABLE(split_words(name)) AS t(w) ON TRUE;
EXPLAIN SELECT id, word, len FROM orders, LATERAL TABLE(words(name)) AS t(word, len) WHERE id > 1 AND len > 3;
EXPLAIN CHANGELOG_MODE SELECT id, add_one(qty) FROM orders WHERE qty > 1;
EXPLAIN CHANGELOG_MODE SELECT id, w FROM orders, LATERAL TABLE(split_words(name)) AS t(w);
-- Python calls inside other expressions: a PythonCalc of the columns those read and the calls
-- (each call as written, f0, f1, …) under a Calc of the expressions.
EXPLAIN SELECT id, add_one(qty) + 1, add_one(id) FROM orders;
EXPLAIN SELECT add_one(qty) * add_one(qty), name, id + qty FROM orders;
EXPLAIN SELECT id, add_one(add_one(qty)) + id FROM orders;
