"""External SPARQL engines: publishing a dataset into one, and the HTTP spoken to it."""
