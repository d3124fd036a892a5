"""Small one-off scripts (comparisons, table builders) that use the library but are not part of it."""
