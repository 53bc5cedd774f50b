-- The shape of incremental_checkpoints_on_disk.sql at a 10 GB state: 10 M keys, each with a
-- 1 000-character payload, loaded once; meanwhile and for about 700 s after, random keys
-- change at 10 000 rows/s: each checkpoint (every 10 s) follows about 1 % of the keys changed.
SET 'state.backend.type' = 'rocksdb';
SET 'state.backend.incremental' = 'true';
SET 'execution.checkpointing.interval' = '10 s';
SET 'execution.checkpointing.dir' = '/tmp/weir-incremental-checkpoints-10gb';
CREATE TABLE loaded (k BIGINT, payload STRING) WITH (
  'connector' = 'datagen', 'rows-per-second' = '1000000000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '10000000',
  'fields.payload.length' = '1000');
CREATE TABLE changed (k BIGINT, payload STRING) WITH (
  'connector' = 'datagen', 'rows-per-second' = '10000', 'number-of-rows' = '10000000',
  'fields.k.min' = '1', 'fields.k.max' = '10000000',
  'fields.payload.length' = '1000');
CREATE TABLE snk (k BIGINT, n BIGINT, payload STRING) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k, COUNT(*), MAX(payload) FROM (
  SELECT * FROM loaded UNION ALL SELECT * FROM changed) GROUP BY k;
