-- Each plan bounds the GraphQL operations that call its product (flightgraph.QueryLimits). Zero
-- means "the default limits" (flightgraph.DefaultQueryLimits), so that plans made before this
-- migration keep working and the defaults live in one place, the code.
ALTER TABLE plans ADD COLUMN max_cost INTEGER NOT NULL DEFAULT 0 CHECK (max_cost >= 0);
ALTER TABLE plans ADD COLUMN max_depth INTEGER NOT NULL DEFAULT 0 CHECK (max_depth >= 0);
ALTER TABLE plans ADD COLUMN max_aliases INTEGER NOT NULL DEFAULT 0 CHECK (max_aliases >= 0);
ALTER TABLE plans ADD COLUMN max_root_fields INTEGER NOT NULL DEFAULT 0 CHECK (max_root_fields >= 0);
ALTER TABLE plans ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0 CHECK (max_tokens >= 0);
