"""The read models behind the site's pages: page data, concept figures, the search index, sitemaps, citations."""
