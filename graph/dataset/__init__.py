"""A dataset built and served: the build (records to triples to store, VoID) and an add, the version directory and its
manifest, dumps, derived data and what a build derives for the site, a graph opened from any source."""
