-- The key-ordered async lookup example of Flink's documentation, as it is written there: bids
-- from a Kafka topic, enriched with user data looked up in Hologres (or any PostgreSQL server:
-- Hologres speaks its protocol). Only the connection values differ (they name the local
-- services below; put your Hologres instance's in their place), and the comma the
-- documentation leaves after the users table's last option, which Flink refuses as weir does
-- (`SQL parse failed. Encountered ")"`).
--
-- A Kafka broker on localhost:9092 with the topic, and a PostgreSQL server on localhost:5432
-- with the users table, started by the project's script (the broker is built once, ~25
-- minutes on two cores); then the bids into the topic, then this job:
--   scripts/example-services start
--   cargo run --bin weir -- run examples/load_bids_into_kafka.sql
--   cargo run --bin weir -- run examples/lookup_join_kafka.sql
--   scripts/example-services stop      (when done)
-- The job reads the topic until it is stopped (Ctrl-C); the blackhole sink prints nothing:
-- change its connector to 'print' to see the rows.

SET 'table.exec.async-lookup.output-mode' = 'ALLOW_UNORDERED';
SET 'table.exec.async-lookup.key-ordered-enabled' = 'true';

create TEMPORARY table bid_source(
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  channel  VARCHAR,
  url  VARCHAR,
  dateTime  TIMESTAMP(3),
  extra  VARCHAR,
  proc_time as proctime(),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) with (
  'connector' = 'kafka', -- A non-insert-only stream connector.
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'csv'
);

CREATE TEMPORARY TABLE users (
    user_id STRING PRIMARY KEY NOT ENFORCED, -- Define the primary key.
    user_name VARCHAR(255) NOT NULL, 
    age INT NOT NULL
) WITH (
    'connector' = 'hologres', -- The connector that supports the asynchronous lookup feature.
    'async' = 'true',
    'dbname' = 'weir_examples', -- The name of the Hologres database.
    'tablename' = 'public.users', -- The name of the Hologres table that is used to receive data.
    'username' = 'postgres', -- The AccessKey ID of your Alibaba Cloud account.
    'password' = 'postgres', -- The AccessKey secret of your Alibaba Cloud account.
    'endpoint' = 'localhost:5432' -- The virtual private cloud (VPC) endpoint of your Hologres instance.
);

CREATE TEMPORARY TABLE bh ( 
    auction  BIGINT,
    age int
) WITH (
    'connector' = 'blackhole'
);

insert into bh
SELECT
    bid_source.auction,
    u.age
FROM bid_source
    JOIN users FOR SYSTEM_TIME AS OF bid_source.proc_time AS u
    ON bid_source.channel = u.user_id;
