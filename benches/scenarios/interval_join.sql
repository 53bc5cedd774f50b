-- An interval join of two generated streams: each of 5,000,000 clicks joined with the impressions of its key (1,000,000 keys) up to 2 s before it; rows are kept only until the watermark passes them.
CREATE TABLE impressions (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.k.min' = '1', 'fields.k.max' = '1000000', 'fields.v.min' = '0', 'fields.v.max' = '1000',
  'fields.ts.max-past' = '5s');
CREATE TABLE clicks (k INT, c BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.k.min' = '1', 'fields.k.max' = '1000000', 'fields.c.min' = '0', 'fields.c.max' = '1000',
  'fields.ts.max-past' = '5s');
CREATE TABLE snk (k INT, v BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT c.k, v.v, c.c FROM clicks c JOIN impressions v
ON c.k = v.k AND v.ts BETWEEN c.ts - INTERVAL '2' SECOND AND c.ts;
