-- The key-ordered async lookup example of Flink's documentation, as it is written there: bids
-- from a Kafka topic, enriched with user data looked up in Hologres (or any PostgreSQL server:
-- Hologres speaks its protocol). Only the connection values differ, and the comma the
-- documentation leaves after the users table's last option, which Flink refuses as weir does
-- (`SQL parse failed. Encountered ")"`).
--
-- A broker on localhost:9092 (tansu, built once into ~/.cache/weir-tools by the script) and
-- the bids in its topic:
--   $(scripts/ensure-kafka-broker) broker --storage-engine memory://tansu/ \
--       --listener-url tcp://127.0.0.1:9092 --advertised-listener-url tcp://localhost:9092 &
--   cargo run --bin weir -- run examples/load_bids_into_kafka.sql
-- A PostgreSQL server with the users table (any server; Debian's postgresql package):
--   CREATE TABLE users (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL);
--   INSERT INTO users VALUES ('web', 'Ann', 31), ('app', 'Bob', 42), ('mail', 'Cy', 27);
-- Fill in the endpoint, database, table and credentials below, then:
--   cargo run --bin weir -- run examples/lookup_join_kafka.sql
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
    'dbname' = 'holo db name', -- The name of the Hologres database.
    'tablename' = 'schema_name.table_name', -- The name of the Hologres table that is used to receive data.
    'username' = 'access id', -- The AccessKey ID of your Alibaba Cloud account.
    'password' = 'access key', -- The AccessKey secret of your Alibaba Cloud account.
    'endpoint' = 'holo vpc endpoint' -- The virtual private cloud (VPC) endpoint of your Hologres instance.
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
