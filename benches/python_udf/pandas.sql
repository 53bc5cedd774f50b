-- A pandas Python function over 1,000,000 generated rows into a blackhole: the cost of calling
-- Python. Run beside Flink by benches/python_udf/run.sh.
SET 'python.files' = 'udfs.py';
CREATE TEMPORARY FUNCTION add_one_pandas AS 'udfs.add_one_pandas' LANGUAGE PYTHON;
CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000000', 'rows-per-second' = '1000000000',
  'fields.x.kind' = 'sequence', 'fields.x.start' = '1', 'fields.x.end' = '1000000');
CREATE TABLE sink (y BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT add_one_pandas(x) FROM gen;
