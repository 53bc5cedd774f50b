-- A regular join: 5,000,000 orders joined on their user with 100,000 users, both sides kept in state.
CREATE TABLE orders (user_id INT, amount BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '100000', 'fields.amount.min' = '0', 'fields.amount.max' = '1000');
CREATE TABLE users (id INT, level INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '100000', 'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000',
  'fields.level.min' = '1', 'fields.level.max' = '5');
CREATE TABLE snk (user_id INT, level INT, amount BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT o.user_id, u.level, o.amount FROM orders o JOIN users u ON o.user_id = u.id;
