-- The tool catalogue. Its rows are not written here: they come from src/catalogue/tools-data.ts through
-- the catalogue seed (src/db/catalogue-seed.ts), which `npm run dev`, the tests and `npm run deploy` run
-- after the migrations, so editing the data file never needs a new migration.
CREATE TABLE tools (
  id           INTEGER PRIMARY KEY,          -- rowid: the search index refers to rows by it
  slug         TEXT NOT NULL COLLATE NOCASE UNIQUE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL,
  path         TEXT NOT NULL,                -- the tool's URL is TOOLS_SITE_URL + path
  tag          TEXT NOT NULL,
  category     TEXT NOT NULL,
  keyword      TEXT NOT NULL
);
-- Listing is ordered by name, alone or within a category; both orders are read straight off an index.
CREATE UNIQUE INDEX tools_by_name ON tools (name COLLATE NOCASE);
CREATE INDEX tools_by_category ON tools (category COLLATE NOCASE, name COLLATE NOCASE);

-- `search` is a case-insensitive substring match on name and description. A trigram index answers
-- substrings of three or more characters without scanning; the triggers keep it in step with `tools`.
CREATE VIRTUAL TABLE tools_search USING fts5 (
  name, description, content = 'tools', content_rowid = 'id', tokenize = 'trigram case_sensitive 0'
);
CREATE TRIGGER tools_search_insert AFTER INSERT ON tools BEGIN
  INSERT INTO tools_search (rowid, name, description) VALUES (new.id, new.name, new.description);
END;
CREATE TRIGGER tools_search_delete AFTER DELETE ON tools BEGIN
  INSERT INTO tools_search (tools_search, rowid, name, description) VALUES ('delete', old.id, old.name, old.description);
END;
CREATE TRIGGER tools_search_update AFTER UPDATE OF name, description ON tools BEGIN
  INSERT INTO tools_search (tools_search, rowid, name, description) VALUES ('delete', old.id, old.name, old.description);
  INSERT INTO tools_search (rowid, name, description) VALUES (new.id, new.name, new.description);
END;
