-- PyFlink functions from udfs.py, registered and called as in Flink's SQL client.
SET 'python.files' = 'udfs.py';

CREATE TEMPORARY FUNCTION add_one AS 'udfs.add_one' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION shout AS 'udfs.shout' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION scale AS 'udfs.scale' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION name_length AS 'udfs.name_length' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION with_tax AS 'udfs.with_tax' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION next_day AS 'udfs.next_day' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION add_hour AS 'udfs.add_hour' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION split_words AS 'udfs.split_words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION word_lengths AS 'udfs.word_lengths' LANGUAGE PYTHON;
CREATE TEMPORARY SYSTEM FUNCTION is_even AS 'udfs.is_even' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION total AS 'udfs.total' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION tag AS 'udfs.tag' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION double_it AS 'udfs.double_it' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION words AS 'udfs.words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION repeat_it AS 'udfs.repeat' LANGUAGE PYTHON;

CREATE TABLE orders (id INT, name STRING, price DECIMAL(10, 2), amount DOUBLE, qty INT, d DATE, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv', 'csv.null-literal' = '');

SELECT id, add_one(id) AS next_id, shout(name, 2) AS loud, scale(amount) AS scaled,
       with_tax(price) AS taxed, next_day(d) AS tomorrow, add_hour(ts) AS later
FROM orders;

SELECT id, name_length(name) AS len, split_words(name) AS words, word_lengths(name) AS lengths
FROM orders WHERE name IS NOT NULL;

SELECT is_even(id) AS even, COUNT(*) AS n, SUM(add_one(qty)) AS s FROM orders GROUP BY is_even(id);

SELECT id, total(amount, qty) AS total, tag(name, qty) AS tagged, double_it(CAST(qty AS BIGINT)) AS twice
FROM orders WHERE name IS NOT NULL;

SELECT id, word, len FROM orders, LATERAL TABLE(words(name)) AS t(word, len) WHERE id > 1;

SELECT id, r FROM orders LEFT JOIN LATERAL TABLE(repeat_it(name, qty)) AS t(r) ON TRUE;
