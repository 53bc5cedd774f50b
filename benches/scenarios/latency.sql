-- Latency below saturation: 200,000 rows/s for 10 s into a keyed aggregation. The figures are
-- the source-to-sink latency percentiles that `weir run --stats` reports.
CREATE TABLE src (a INT, b BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '2000000', 'rows-per-second' = '200000',
  'fields.a.min' = '1', 'fields.a.max' = '100000', 'fields.b.min' = '0', 'fields.b.max' = '1000');
CREATE TABLE snk (a INT, s BIGINT, n BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a, SUM(b), COUNT(*) FROM src GROUP BY a;
