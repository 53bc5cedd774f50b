-- A regular join whose state is on disk: 2 M generated orders (ids in sequence) joined with
-- 2 M generated payments of random orders, both sides kept in state, into a blackhole.
SET 'state.backend.type' = 'rocksdb';
CREATE TABLE orders (o_id BIGINT, amount BIGINT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '1000000000',
  'fields.o_id.kind' = 'sequence', 'fields.o_id.start' = '1', 'fields.o_id.end' = '2000000',
  'fields.amount.min' = '1', 'fields.amount.max' = '1000');
CREATE TABLE payments (p_id BIGINT, o_id BIGINT) WITH (
  'connector' = 'datagen', 'rows-per-second' = '1000000000',
  'fields.p_id.kind' = 'sequence', 'fields.p_id.start' = '1', 'fields.p_id.end' = '2000000',
  'fields.o_id.min' = '1', 'fields.o_id.max' = '2000000');
CREATE TABLE snk (o_id BIGINT, amount BIGINT, p_id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT o.o_id, o.amount, p.p_id FROM orders AS o JOIN payments AS p ON o.o_id = p.o_id;
