-- The store's identity: a random id (a version 4 UUID) made once, when the
-- store is created (or, for a store from an earlier bollhav, when it is
-- upgraded), and never changed. A warehouse's ledger records it with each
-- unit it writes, so a new store — or a second store sharing the
-- warehouse — never takes another store's ledger row for its own
-- (docs/semantics.md, "Exactly once across two databases"). It is a plain
-- stored value: a copy of the file keeps it.
CREATE TABLE "store_identity" (
    "one"        INTEGER PRIMARY KEY CHECK ("one" = 1),
    "id"         TEXT    NOT NULL,
    "created_at" INTEGER NOT NULL
);
INSERT INTO "store_identity" ("one", "id", "created_at")
SELECT 1, lower(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-' ||
       substr('89ab', 1 + (abs(random()) % 4), 1) || substr(h, 18, 3) || '-' || substr(h, 21, 12)),
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
FROM (SELECT hex(randomblob(16)) AS h);
