-- A table partitioned by a STRING and an INT column: NULL and empty values, characters a path
-- cannot hold, several rows per partition; every partition committed with a success file.
-- ${OUT} is a new directory for each run (tests/filesystem.rs).
SET 'execution.checkpointing.interval' = '1s';

CREATE TABLE people (
  id INT,
  name STRING,
  region STRING,
  `day` INT,
  ts TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'data/partitioned_regions.csv', 'format' = 'csv',
  'csv.null-literal' = 'NULL');

CREATE TABLE by_region (
  id INT,
  name STRING,
  region STRING,
  ts TIMESTAMP(3),
  `day` INT
) PARTITIONED BY (region, `day`) WITH (
  'connector' = 'filesystem',
  'path' = '${OUT}/by_region',
  'format' = 'json',
  'sink.rolling-policy.file-size' = '1b',
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.partition-commit.success-file.name' = '_DONE'
);

INSERT INTO by_region SELECT id, name, region, ts, `day` FROM people;

-- Flink 2.3 cannot read a partitioned table back once it holds a NULL or empty partition value
-- ("Path should not be null or empty: null"); weir reads those as NULL. So the rows read back
-- come from a second table without them.
CREATE TABLE known_regions (
  id INT,
  name STRING,
  region STRING,
  ts TIMESTAMP(3),
  `day` INT
) PARTITIONED BY (region, `day`) WITH (
  'connector' = 'filesystem',
  'path' = '${OUT}/known_regions',
  'format' = 'csv'
);

INSERT INTO known_regions SELECT id, name, region, ts, `day` FROM people WHERE region <> '' AND `day` IS NOT NULL;

CREATE TABLE read_back (
  id INT,
  name STRING,
  region STRING,
  ts TIMESTAMP(3),
  `day` INT
) WITH ('connector' = 'print', 'print-identifier' = 'read_back');

INSERT INTO read_back SELECT * FROM known_regions;

CREATE TABLE eu_only (
  id INT,
  region STRING,
  `day` INT
) WITH ('connector' = 'print', 'print-identifier' = 'eu_only');

INSERT INTO eu_only SELECT id, region, `day` FROM known_regions WHERE region = 'eu' AND `day` = 1;
