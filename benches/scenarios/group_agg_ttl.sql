-- group_agg.sql with state TTL: each group's state is kept as values with the time it was
-- last written (keyed value state), and every update is emitted even when unchanged.
SET 'table.exec.state.ttl' = '1 h';
CREATE TABLE src (a INT, b BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20000000', 'rows-per-second' = '1000000000',
  'fields.a.min' = '1', 'fields.a.max' = '100000', 'fields.b.min' = '0', 'fields.b.max' = '1000');
CREATE TABLE snk (a INT, s BIGINT, n BIGINT, m BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a, SUM(b), COUNT(*), MAX(b) FROM src GROUP BY a;
