-- group_agg.sql with a checkpoint every second (the harness sets execution.checkpointing.dir).
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE src (a INT, b BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20000000', 'rows-per-second' = '1000000000',
  'fields.a.min' = '1', 'fields.a.max' = '100000', 'fields.b.min' = '0', 'fields.b.max' = '1000');
CREATE TABLE snk (a INT, s BIGINT, n BIGINT, m BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a, SUM(b), COUNT(*), MAX(b) FROM src GROUP BY a;
