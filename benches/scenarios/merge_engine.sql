-- Merges into a managed table with the aggregation merge engine: 1 000 000 rows over 100 000
-- keys, five aggregated fields. The INSERT is bounded, so its rows merge in one durable
-- transaction at the end of input. The harness gives each run an empty 'table.store.path'.
CREATE TABLE events (
  k BIGINT, amount BIGINT, peak INT, low INT, flagged BOOLEAN, tag STRING
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '1000000',
  'rows-per-second' = '1000000000',
  'fields.k.min' = '1',
  'fields.k.max' = '100000',
  'fields.tag.length' = '4'
);

CREATE TABLE totals (
  k BIGINT, amount BIGINT, peak INT, low INT, flagged BOOLEAN, tag STRING,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'table.merge-engine' = 'aggregation',
  'fields.amount.agg' = 'sum',
  'fields.peak.agg' = 'max',
  'fields.low.agg' = 'min',
  'fields.flagged.agg' = 'bool_or',
  'fields.tag.agg' = 'last_value_ignore_nulls'
);

INSERT INTO totals SELECT * FROM events;
