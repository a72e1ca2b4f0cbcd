-- The components a page was generated with, as a JSON object from each component's name to the
-- content hash of its spec (`pages::component_set`), so a page renders with the specs its step
-- offered and never with another step's override of the same name. NULL for pages stored before
-- this column: those keep rendering with the runner's page catalog.
ALTER TABLE pages ADD COLUMN component_set TEXT;
