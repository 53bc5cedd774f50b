-- Enrich bids with user data looked up in Hologres (or any PostgreSQL server: Hologres speaks
-- its protocol) in key-ordered mode. This is the lookup example of Flink's key-ordered
-- documentation, with its Kafka source replaced by a local CSV file, plus the same lookup over
-- an updating input, where key-ordered mode applies.
--
-- Fill in the endpoint, database, table and credentials, then:
--   cargo run --bin weir -- run examples/lookup_join_hologres.sql
-- The users table: CREATE TABLE users (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL);

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
  'connector' = 'filesystem',
  'path' = 'examples/data/bids.csv',
  'format' = 'csv'
);

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

CREATE TEMPORARY TABLE bh (
    auction  BIGINT,
    age int
) WITH (
    'connector' = 'blackhole'
);

-- An updating input: every bid updates its channel's row (-U/+U), keyed by channel.
CREATE TEMPORARY VIEW channel_bids AS
SELECT channel, COUNT(*) AS bids, MAX(price) AS top_price, PROCTIME() AS proc_time
FROM bid_source
GROUP BY channel;

CREATE TEMPORARY TABLE channel_users (
    channel STRING,
    bids BIGINT,
    top_price BIGINT,
    age INT
) WITH (
    'connector' = 'print'
);

EXECUTE STATEMENT SET BEGIN

insert into bh
SELECT
    bid_source.auction,
    u.age
FROM bid_source
    JOIN users FOR SYSTEM_TIME AS OF bid_source.proc_time AS u
    ON bid_source.channel = u.user_id;

INSERT INTO channel_users
SELECT c.channel, c.bids, c.top_price, u.age
FROM channel_bids AS c
    JOIN users FOR SYSTEM_TIME AS OF c.proc_time AS u
    ON c.channel = u.user_id;

END;
