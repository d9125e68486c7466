"""Paper lists read into records: input files found, lines parsed, author lines cleaned, names and plain text
normalised (imports no other package of the domain)."""
