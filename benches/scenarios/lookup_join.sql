-- A lookup join whose every lookup takes 1 ms: 200,000 rows enriched from a 10,000-row table.
-- The table's connector, 'bench-lookup' (rows `[id, 'name-<id>']`, options 'rows' and 'latency'),
-- exists in the load-test harness only: run it with `cargo bench --bench harness -- lookup_join`.
CREATE TABLE src (k BIGINT, n BIGINT, proc_time AS PROCTIME()) WITH (
  'connector' = 'datagen', 'number-of-rows' = '200000', 'rows-per-second' = '1000000000',
  'fields.k.min' = '0', 'fields.k.max' = '9999');
CREATE TABLE dim (id BIGINT, name STRING) WITH ('connector' = 'bench-lookup', 'rows' = '10000', 'latency' = '1 ms');
CREATE TABLE snk (k BIGINT, n BIGINT, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT s.k, s.n, d.name FROM src AS s JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON s.k = d.id;
