-- partitions: 2
CREATE TABLE t (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN, score DOUBLE, d DATE, tags ARRAY<STRING>)
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json');
INSERT INTO t VALUES
  (1, 'apple', 1.50, TIMESTAMP '2024-01-01 10:00:00.123', true, 0.5, DATE '2024-01-01', CAST(ARRAY['a', 'b'] AS ARRAY<STRING>)),
  (2, CAST(NULL AS STRING), 2.25, TIMESTAMP '2024-01-01 10:00:01', false, -1.25e10, DATE '1999-12-31', CAST(ARRAY['x'] AS ARRAY<STRING>)),
  (3, 'quote "q" and \ back', CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS BOOLEAN), CAST(NULL AS DOUBLE), CAST(NULL AS DATE), CAST(NULL AS ARRAY<STRING>)),
  (4, 'ünïcødé ✓', -0.01, TIMESTAMP '1970-01-01 00:00:00', true, 3.0, DATE '1970-01-01', ARRAY[CAST(NULL AS STRING)]);
-- read
CREATE TABLE r (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN, score DOUBLE, d DATE, tags ARRAY<STRING>)
WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE printed (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN, score DOUBLE, d DATE, tags ARRAY<STRING>) WITH ('connector' = 'print');
INSERT INTO printed SELECT * FROM r;
