-- Event-time TUMBLE windows over 5 M keys with state on disk: 10 M generated rows, an hour-long
-- window (the rows' clock spans seconds), so every key has a window and a timer waiting until
-- the input ends.
SET 'state.backend.type' = 'rocksdb';
CREATE TABLE src (a BIGINT, b BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '10000000', 'rows-per-second' = '1000000000',
  'fields.a.min' = '1', 'fields.a.max' = '5000000', 'fields.b.min' = '0', 'fields.b.max' = '1000',
  'fields.ts.max-past' = '5s');
CREATE TABLE snk (a BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), s BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a, window_start, window_end, SUM(b), COUNT(*)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY a, window_start, window_end;
