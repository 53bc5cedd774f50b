-- The same job as general.sql and pandas.sql with the built-in `x + 1`: what the rows cost without Python.
CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000000', 'rows-per-second' = '1000000000',
  'fields.x.kind' = 'sequence', 'fields.x.start' = '1', 'fields.x.end' = '1000000');
CREATE TABLE sink (y BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT x + 1 FROM gen;
