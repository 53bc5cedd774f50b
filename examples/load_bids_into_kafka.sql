-- Writes the bids of examples/data/bids.csv into the topic 'user_behavior' of the broker on
-- localhost:9092, for examples/lookup_join_kafka.sql (`scripts/example-services start` starts
-- the broker with the topic; run from the project's directory). It ends once the six bids are
-- written: `Done in 0.12 s: wrote 6 rows to bids_topic.`
CREATE TABLE bids_file (
  auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'examples/data/bids.csv', 'format' = 'csv');

CREATE TABLE bids_topic (
  auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'csv'
);

INSERT INTO bids_topic SELECT * FROM bids_file;
