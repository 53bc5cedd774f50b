-- An updating aggregate into a sink keyed on another column than the aggregate's key: the
-- SinkMaterializer (ON CONFLICT DO DEDUPLICATE) keeps per sink key the rows alive, about 20
-- each; 5 M rows, each an update (-U, +U) of one of 200 000 groups.
CREATE TABLE src (a INT, b INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.a.min' = '1', 'fields.a.max' = '20000', 'fields.b.min' = '0', 'fields.b.max' = '9');
CREATE TABLE snk (k INT, a INT, b INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a % 10000 AS k, a, b, COUNT(*) FROM src GROUP BY a, b ON CONFLICT DO DEDUPLICATE;
