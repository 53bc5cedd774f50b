-- PyFlink aggregate functions from udafs.py over udaf_rows.csv, as Flink's SQL client runs them:
-- types from get_result_type/get_accumulator_type or from udaf(...), list accumulators updated
-- in place, retract over updating input. udafs.flink.out is what Flink 2.3 printed (p = 2; the
-- rows of b are the `wavg` column of a wider query Flink ran, whose other columns depended on
-- the order updates arrive in).
SET 'python.files' = 'udafs.py';

CREATE TEMPORARY FUNCTION weighted_avg AS 'udafs.weighted_avg' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION concat_agg AS 'udafs.concat_agg' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION max_by AS 'udafs.max_by' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION retract_sum AS 'udafs.retract_sum' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION concat_retract AS 'udafs.concat_retract' LANGUAGE PYTHON;

CREATE TABLE t (id INT, k STRING, k2 INT, v DOUBLE, w INT, s STRING, ts TIMESTAMP(3),
                WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'udaf_rows.csv', 'format' = 'csv', 'csv.null-literal' = '');

CREATE TABLE out_a (k STRING, wavg DOUBLE, names STRING, top STRING) WITH ('connector' = 'print', 'print-identifier' = 'a');
CREATE TABLE out_b (k STRING, wavg DOUBLE) WITH ('connector' = 'print', 'print-identifier' = 'b');

INSERT INTO out_a SELECT k, weighted_avg(v, w), concat_agg(s), max_by(s, v) FROM t GROUP BY k;
INSERT INTO out_b
SELECT k, weighted_avg(CAST(c AS DOUBLE), k2) FROM (SELECT k, k2, COUNT(*) AS c FROM t GROUP BY k, k2) GROUP BY k;
