"""Array operations every layer of the domain shares (numpy only: imports no other package of the domain)."""
