-- A store's retirement (docs/semantics.md, "Moving a store"): a store whose
-- state `bollhav store copy` moved elsewhere, or a read-only snapshot of
-- another store, refuses every write. Empty kind: a live store. The
-- refusal itself is a set of triggers the retirement creates in the same
-- transaction, so a live store's writes pay nothing for it.
ALTER TABLE "store_identity" ADD COLUMN "retired_kind" TEXT NOT NULL DEFAULT '';
ALTER TABLE "store_identity" ADD COLUMN "retired_other" TEXT NOT NULL DEFAULT '';
ALTER TABLE "store_identity" ADD COLUMN "retired_at" INTEGER;
