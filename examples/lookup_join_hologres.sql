-- Enrich bids with user data looked up in Hologres (or any PostgreSQL server: Hologres speaks
-- its protocol), in key-ordered mode: the changes of one channel are looked up in order while
-- different channels are looked up concurrently.
--
-- Fill in the endpoint, database, table and credentials, then:
--   cargo run --bin weir -- run examples/lookup_join_hologres.sql
-- The users table: CREATE TABLE users (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL);

SET 'table.exec.async-lookup.output-mode' = 'ALLOW_UNORDERED';
SET 'table.exec.async-lookup.key-ordered-enabled' = 'true';

-- The bids, from a local source instead of Kafka.
CREATE TEMPORARY VIEW bid_source AS
SELECT auction, bidder, price, channel, PROCTIME() AS proc_time
FROM (VALUES
  (1, 10, 100, 'web'), (2, 11, 120, 'app'), (3, 12, 90, 'tv'),
  (4, 10, 130, 'web'), (5, 13, 80, 'mail'), (6, 11, 150, 'app')
) AS t(auction, bidder, price, channel);

-- An updating input: every new bid updates its channel's row (-U/+U), keyed by channel.
CREATE TEMPORARY VIEW channel_bids AS
SELECT channel, COUNT(*) AS bids, MAX(price) AS top_price, PROCTIME() AS proc_time
FROM bid_source
GROUP BY channel;

CREATE TEMPORARY TABLE users (
    user_id STRING PRIMARY KEY NOT ENFORCED,
    user_name VARCHAR(255) NOT NULL,
    age INT NOT NULL
) WITH (
    'connector' = 'hologres',
    'async' = 'true',
    'dbname' = 'holo db name',
    'tablename' = 'schema_name.table_name',
    'username' = 'access id',
    'password' = 'access key',
    'endpoint' = 'holo vpc endpoint'
);

CREATE TEMPORARY TABLE channel_users (
    channel STRING,
    bids BIGINT,
    top_price INT,
    age INT
) WITH (
    'connector' = 'print'
);

INSERT INTO channel_users
SELECT c.channel, c.bids, c.top_price, u.age
FROM channel_bids AS c
    JOIN users FOR SYSTEM_TIME AS OF c.proc_time AS u
    ON c.channel = u.user_id;
