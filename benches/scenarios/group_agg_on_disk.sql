-- A GROUP BY whose state is on disk: 3 M generated rows over 1.5 M keys (about 1.2 M groups),
-- SUM and COUNT per key into a blackhole, with Flink's RocksDB backend on either engine.
SET 'state.backend.type' = 'rocksdb';
CREATE TABLE src (a BIGINT, b BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000000', 'rows-per-second' = '1000000000',
  'fields.a.min' = '1', 'fields.a.max' = '1500000', 'fields.b.min' = '0', 'fields.b.max' = '1000');
CREATE TABLE snk (a BIGINT, s BIGINT, n BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a, SUM(b), COUNT(*) FROM src GROUP BY a;
