-- Collectors that push to this server from other network zones (collect
-- --push): each has a name and a token, of which only the SHA-256 is kept,
-- so a copy of the warehouse does not let anyone push. A revoked token stays
-- listed (when, by whom it was used last) until a new one takes its name.

CREATE TABLE collector_token (
    name       CITEXT NOT NULL PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,      -- hex SHA-256 of the token
    created_at BIGINT NOT NULL,          -- UTC ms
    revoked_at BIGINT,                   -- NULL while valid
    used_at    BIGINT                    -- last accepted push, UTC ms
);

-- The batches applied, by collector and batch id, so that a batch sent
-- again (its acknowledgement was lost) is acknowledged without being
-- applied twice. Applying twice would add nothing either (the warehouse's
-- keys deduplicate facts); this saves the work and says so.
CREATE TABLE push_batch (
    collector  CITEXT NOT NULL,
    batch      TEXT NOT NULL,
    applied_at BIGINT NOT NULL,          -- UTC ms
    records    BIGINT NOT NULL,
    added      BIGINT NOT NULL,
    PRIMARY KEY (collector, batch)
);
CREATE INDEX push_batch_applied ON push_batch (applied_at);
